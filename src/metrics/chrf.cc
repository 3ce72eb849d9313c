#include "metrics/chrf.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"
#include "metrics/tokenize.h"

namespace transduce::metrics {
namespace {

// Character n-gram counts per order 1..max_order; keys view the text they were taken from.
using CharNgrams = std::vector<std::unordered_map<std::u32string_view, int64_t>>;

CharNgrams char_ngrams(std::u32string_view text, int max_order) {
  CharNgrams counts(static_cast<size_t>(max_order));
  for (size_t n = 1; n <= static_cast<size_t>(max_order) && n <= text.size(); ++n)
    for (size_t i = 0; i + n <= text.size(); ++i) ++counts[n - 1][text.substr(i, n)];
  return counts;
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  if (counts.size() < other.counts.size()) counts.resize(other.counts.size(), 0);
  for (size_t i = 0; i < other.counts.size(); ++i) counts[i] += other.counts[i];
  return *this;
}

std::string ChrfScore::name() const {
  return fmt::format("chrF{}", beta);
}

std::string ChrfScore::format(int width) const {
  return fmt::format("{} = {:.{}f}", name(), score, width);
}

Chrf::Chrf(ChrfOptions options) : options_(options) {
  if (options_.char_order < 1) fail("chrF: the character n-gram order must be at least 1");
  if (options_.beta < 0) fail("chrF: beta must not be negative");
}

ChrfStats Chrf::segment_stats(std::string_view hypothesis,
                              const std::vector<std::string_view>& references) const {
  TD_CHECK(!references.empty(), "chrF needs at least one reference");
  const int order = options_.char_order;
  auto prepare = [&](std::string_view s) {
    std::string text = options_.lowercase ? to_lower(s) : std::string(s);
    if (!options_.whitespace) text = remove_whitespace(text);
    return decode_utf8(text);
  };

  const std::u32string hyp_text = prepare(hypothesis);
  const CharNgrams hyp = char_ngrams(hyp_text, order);

  ChrfStats best;
  double best_f = -1.0;
  for (std::string_view reference : references) {
    const std::u32string ref_text = prepare(reference);
    const CharNgrams ref = char_ngrams(ref_text, order);
    ChrfStats stats;
    stats.counts.assign(3 * static_cast<size_t>(order), 0);
    for (size_t n = 0; n < static_cast<size_t>(order); ++n) {
      int64_t hyp_count = 0, ref_count = 0, matches = 0;
      for (const auto& [ngram, count] : hyp[n]) {
        hyp_count += count;
        const auto it = ref[n].find(ngram);
        if (it != ref[n].end()) matches += std::min(count, it->second);
      }
      for (const auto& entry : ref[n]) ref_count += entry.second;
      // Hypothesis n-grams of an order the reference is too short to have do not count.
      stats.counts[3 * n] = ref[n].empty() ? 0 : hyp_count;
      stats.counts[3 * n + 1] = ref_count;
      stats.counts[3 * n + 2] = matches;
    }
    // The first reference with the strictly best sentence score wins.
    const double f = f_score(stats);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

double Chrf::f_score(const ChrfStats& stats) const {
  constexpr double kEps = 1e-16;
  const size_t order = static_cast<size_t>(options_.char_order);
  TD_CHECK(stats.counts.size() == 3 * order, "chrF statistics of {} counts for order {}",
           stats.counts.size(), order);
  const double factor = static_cast<double>(options_.beta) * options_.beta;

  double eps_sum = 0.0;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (size_t n = 0; n < order; ++n) {
    const int64_t n_hyp = stats.counts[3 * n];
    const int64_t n_ref = stats.counts[3 * n + 1];
    const auto n_match = static_cast<double>(stats.counts[3 * n + 2]);
    const double prec = n_hyp > 0 ? n_match / static_cast<double>(n_hyp) : kEps;
    const double rec = n_ref > 0 ? n_match / static_cast<double>(n_ref) : kEps;
    const double denom = factor * prec + rec;
    eps_sum += denom > 0 ? (1 + factor) * prec * rec / denom : kEps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options_.eps_smoothing) return 100 * eps_sum / static_cast<double>(order);

  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

ChrfScore Chrf::compute(const ChrfStats& stats) const {
  return ChrfScore{f_score(stats), options_.beta};
}

ChrfScore Chrf::sentence_score(std::string_view hypothesis,
                               const std::vector<std::string_view>& references) const {
  std::vector<std::string_view> refs;
  for (std::string_view r : references)
    if (!r.empty()) refs.push_back(r);
  if (refs.empty()) fail("chrF: every reference is empty (at least one is needed)");
  return compute(segment_stats(hypothesis, refs));
}

ChrfScore Chrf::corpus_score(const std::vector<std::string>& hypotheses,
                             const ReferenceStreams& references) const {
  check_streams(references, hypotheses.size());
  ChrfStats sum;
  sum.counts.assign(3 * static_cast<size_t>(options_.char_order), 0);
  for (size_t i = 0; i < hypotheses.size(); ++i)
    sum += segment_stats(hypotheses[i], segment_references(references, i));
  return compute(sum);
}

std::string Chrf::signature(std::string_view nrefs) const {
  return fmt::format("nrefs:{}|case:{}|eff:{}|nc:{}|nw:0|space:{}|version:{}", nrefs,
                     options_.lowercase ? "lc" : "mixed", options_.eps_smoothing ? "no" : "yes",
                     options_.char_order, options_.whitespace ? "yes" : "no", kMetricsVersion);
}

}  // namespace transduce::metrics
