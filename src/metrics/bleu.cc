#include "metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"

namespace transduce::metrics {
namespace {

// N-grams of a whitespace-normalized token string, keyed by their text (tokens joined by single
// spaces, which no token contains), one map per order.
using NgramCounts = std::vector<std::unordered_map<std::string_view, int64_t>>;

// Counts the n-grams of `text` (tokens separated by single spaces) for orders 1..max_order and
// returns the token count. The keys view `text`.
int64_t count_ngrams(std::string_view text, int max_order, NgramCounts& counts) {
  counts.assign(static_cast<size_t>(max_order), {});
  std::vector<size_t> starts, ends;
  for (size_t i = 0; i < text.size();) {
    const size_t space = text.find(' ', i);
    const size_t end = space == std::string_view::npos ? text.size() : space;
    starts.push_back(i);
    ends.push_back(end);
    i = end + 1;
  }
  const size_t n_tokens = starts.size();
  for (size_t n = 1; n <= static_cast<size_t>(max_order) && n <= n_tokens; ++n)
    for (size_t i = 0; i + n <= n_tokens; ++i)
      ++counts[n - 1][text.substr(starts[i], ends[i + n - 1] - starts[i])];
  return static_cast<int64_t>(n_tokens);
}

// sacreBLEU's floor of log(0).
double log_or_floor(double x) {
  return x == 0.0 ? -9999999999.0 : std::log(x);
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  if (correct.size() < other.correct.size()) correct.resize(other.correct.size(), 0);
  if (total.size() < other.total.size()) total.resize(other.total.size(), 0);
  for (size_t n = 0; n < other.correct.size(); ++n) correct[n] += other.correct[n];
  for (size_t n = 0; n < other.total.size(); ++n) total[n] += other.total[n];
  return *this;
}

std::string BleuScore::format(int width) const {
  std::string precision_text;
  for (size_t n = 0; n < precisions.size(); ++n) {
    if (n > 0) precision_text += '/';
    precision_text += fmt::format("{:.1f}", precisions[n]);
  }
  return fmt::format("BLEU = {:.{}f} {} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                     score, width, precision_text, bp, ratio, hyp_len, ref_len);
}

Bleu::Bleu(BleuOptions options) : options_(options) {
  if (options_.max_order < 1) fail("BLEU: the maximum n-gram order must be at least 1");
}

std::string Bleu::preprocess(std::string_view segment) const {
  if (options_.lowercase) {
    const std::string lower = to_lower(segment);
    return tokenize(rstrip_whitespace(lower), options_.tokenizer);
  }
  return tokenize(rstrip_whitespace(segment), options_.tokenizer);
}

BleuStats Bleu::segment_stats(std::string_view hypothesis,
                              const std::vector<std::string_view>& references) const {
  TD_CHECK(!references.empty(), "BLEU needs at least one reference");
  const int max_order = options_.max_order;

  // The reference side: for each n-gram its largest count in any one reference, and every
  // reference's length.
  std::vector<std::string> ref_texts;
  ref_texts.reserve(references.size());
  for (std::string_view r : references) ref_texts.push_back(normalize_whitespace(preprocess(r)));
  NgramCounts ref_max;
  std::vector<int64_t> ref_lens;
  for (const std::string& text : ref_texts) {
    NgramCounts counts;
    ref_lens.push_back(count_ngrams(text, max_order, counts));
    if (ref_max.empty()) {
      ref_max = std::move(counts);
      continue;
    }
    for (size_t n = 0; n < counts.size(); ++n)
      for (const auto& [ngram, count] : counts[n]) {
        int64_t& best = ref_max[n][ngram];
        best = std::max(best, count);
      }
  }

  const std::string hyp_text = normalize_whitespace(preprocess(hypothesis));
  NgramCounts hyp_counts;
  BleuStats stats;
  stats.hyp_len = count_ngrams(hyp_text, max_order, hyp_counts);

  // The closest reference length; on a tie, the shorter one.
  int64_t best_diff = -1;
  for (int64_t len : ref_lens) {
    const int64_t diff = std::llabs(stats.hyp_len - len);
    if (best_diff < 0 || diff < best_diff || (diff == best_diff && len < stats.ref_len)) {
      best_diff = diff;
      stats.ref_len = len;
    }
  }

  stats.correct.assign(static_cast<size_t>(max_order), 0);
  stats.total.assign(static_cast<size_t>(max_order), 0);
  for (size_t n = 0; n < hyp_counts.size(); ++n)
    for (const auto& [ngram, count] : hyp_counts[n]) {
      stats.total[n] += count;
      const auto it = ref_max[n].find(ngram);
      if (it != ref_max[n].end()) stats.correct[n] += std::min(count, it->second);
    }
  return stats;
}

BleuScore compute_bleu(const BleuStats& stats, const BleuOptions& options) {
  const size_t max_order = static_cast<size_t>(options.max_order);
  BleuScore s;
  s.counts = stats.correct;
  s.totals = stats.total;
  s.counts.resize(max_order, 0);
  s.totals.resize(max_order, 0);
  s.hyp_len = stats.hyp_len;
  s.ref_len = stats.ref_len;
  s.ratio = s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
  if (s.hyp_len < s.ref_len)
    s.bp = s.hyp_len > 0
               ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len))
               : 0.0;
  else
    s.bp = 1.0;
  s.precisions.assign(max_order, 0.0);

  // No match of any order: 0, whatever the smoothing.
  if (std::all_of(s.counts.begin(), s.counts.end(), [](int64_t c) { return c == 0; })) {
    s.score = 0.0;
    return s;
  }

  double smooth_value = 0.0;
  if (options.smoothing == BleuSmoothing::kFloor) smooth_value = options.smooth_value.value_or(0.1);
  if (options.smoothing == BleuSmoothing::kAddK) smooth_value = options.smooth_value.value_or(1.0);

  double exp_factor = 1.0;
  size_t eff_order = max_order;
  for (size_t n = 1; n <= max_order; ++n) {
    double correct = static_cast<double>(s.counts[n - 1]);
    double total = static_cast<double>(s.totals[n - 1]);
    if (options.smoothing == BleuSmoothing::kAddK && n > 1) {
      correct += smooth_value;
      total += smooth_value;
    }
    // No hypothesis n-grams of this order (a short corpus): this and higher orders keep
    // precision 0, which without effective order makes the score 0.
    if (total == 0) break;
    if (options.effective_order) eff_order = n;
    if (correct == 0) {
      if (options.smoothing == BleuSmoothing::kExp) {
        exp_factor *= 2;
        s.precisions[n - 1] = 100.0 / (exp_factor * total);
      } else if (options.smoothing == BleuSmoothing::kFloor) {
        s.precisions[n - 1] = 100.0 * smooth_value / total;
      }
    } else {
      s.precisions[n - 1] = 100.0 * correct / total;
    }
  }

  double log_sum = 0.0;
  for (size_t n = 0; n < eff_order; ++n) log_sum += log_or_floor(s.precisions[n]);
  s.score = s.bp * std::exp(log_sum / static_cast<double>(eff_order));
  return s;
}

BleuScore Bleu::compute(const BleuStats& stats) const {
  return compute_bleu(stats, options_);
}

BleuScore Bleu::sentence_score(std::string_view hypothesis,
                               const std::vector<std::string_view>& references) const {
  std::vector<std::string_view> refs;
  for (std::string_view r : references)
    if (!r.empty()) refs.push_back(r);
  if (refs.empty()) fail("BLEU: every reference is empty (at least one is needed)");
  return compute(segment_stats(hypothesis, refs));
}

BleuScore Bleu::corpus_score(const std::vector<std::string>& hypotheses,
                             const ReferenceStreams& references) const {
  check_streams(references, hypotheses.size());
  BleuStats sum;
  sum.correct.assign(static_cast<size_t>(options_.max_order), 0);
  sum.total.assign(static_cast<size_t>(options_.max_order), 0);
  for (size_t i = 0; i < hypotheses.size(); ++i)
    sum += segment_stats(hypotheses[i], segment_references(references, i));
  return compute(sum);
}

std::string Bleu::signature(std::string_view nrefs) const {
  std::string smooth;
  switch (options_.smoothing) {
    case BleuSmoothing::kNone:
      smooth = "none";
      break;
    case BleuSmoothing::kExp:
      smooth = "exp";
      break;
    case BleuSmoothing::kFloor:
      smooth = fmt::format("floor[{:.2f}]", options_.smooth_value.value_or(0.1));
      break;
    case BleuSmoothing::kAddK:
      smooth = fmt::format("add-k[{:.2f}]", options_.smooth_value.value_or(1.0));
      break;
  }
  return fmt::format("nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}", nrefs,
                     options_.lowercase ? "lc" : "mixed", options_.effective_order ? "yes" : "no",
                     tokenizer_name(options_.tokenizer), smooth, kMetricsVersion);
}

}  // namespace transduce::metrics
