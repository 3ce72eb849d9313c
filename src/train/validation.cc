#include "train/validation.h"

#include <cmath>

#include "core/error.h"
#include "core/json_number.h"
#include "decode/translator.h"
#include "io/atomic_file.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"

namespace transduce {

std::string_view valid_metric_name(ValidMetric m) {
  switch (m) {
    case ValidMetric::kPerplexity:
      return "ppl";
    case ValidMetric::kBleu:
      return "bleu";
    case ValidMetric::kChrf:
      return "chrf";
  }
  return "?";
}

std::optional<ValidMetric> valid_metric_from_name(std::string_view name) {
  for (ValidMetric m : {ValidMetric::kPerplexity, ValidMetric::kBleu, ValidMetric::kChrf})
    if (valid_metric_name(m) == name) return m;
  return std::nullopt;
}

bool lower_is_better(ValidMetric m) {
  return m == ValidMetric::kPerplexity;
}

bool needs_translation(const std::vector<ValidMetric>& metrics) {
  for (ValidMetric m : metrics)
    if (m != ValidMetric::kPerplexity) return true;
  return false;
}

ValidTranslations translate_validation(Transformer& model, const std::vector<Example>& valid,
                                       const ValidText& text, const SearchOptions& search,
                                       int64_t batch_tokens, Communicator& comm) {
  TD_CHECK(text.references.size() == valid.size(), "{} references for {} validation examples",
           text.references.size(), valid.size());
  TD_CHECK(static_cast<bool>(text.detokenize), "validation by translation without a detokenizer");
  const size_t n = valid.size(), ranks = static_cast<size_t>(comm.size());
  const size_t rank = static_cast<size_t>(comm.rank());
  // This rank's share: every K-th sentence, so that each rank gets long and short ones alike.
  std::vector<std::vector<int32_t>> mine;
  for (size_t i = rank; i < n; i += ranks) mine.push_back(valid[i].src);
  SearchArenas arenas;
  std::vector<std::vector<Hypothesis>> found =
      search_sources(model, mine, search, batch_tokens, &arenas);

  // Shared through sums: first every output's length, then the tokens at their offsets (ids are
  // exact in a double). Each rank fills its own sentences' places and zeros elsewhere.
  std::vector<double> lengths(n, 0.0);
  for (size_t k = 0, i = rank; i < n; ++k, i += ranks)
    lengths[i] = static_cast<double>(found[k].front().tokens.size());
  comm.sum(lengths.data(), static_cast<int64_t>(n), "the validation translations' lengths");
  std::vector<size_t> offsets(n + 1, 0);
  for (size_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + static_cast<size_t>(lengths[i]);
  std::vector<double> tokens(offsets[n], 0.0);
  for (size_t k = 0, i = rank; i < n; ++k, i += ranks) {
    const std::vector<int32_t>& t = found[k].front().tokens;
    for (size_t j = 0; j < t.size(); ++j) tokens[offsets[i] + j] = static_cast<double>(t[j]);
  }
  comm.sum(tokens.data(), static_cast<int64_t>(tokens.size()), "the validation translations");

  ValidTranslations out;
  out.hypotheses.reserve(n);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < n; ++i) {
    ids.assign(tokens.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
               tokens.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
    out.hypotheses.push_back(text.detokenize(ids));
  }
  const metrics::ReferenceStreams refs{text.references};
  out.bleu = metrics::Bleu().corpus_score(out.hypotheses, refs).score;
  out.chrf = metrics::Chrf().corpus_score(out.hypotheses, refs).score;
  return out;
}

void write_valid_output(const std::string& path, int64_t step, const ValidText& text,
                        const std::vector<std::string>& hypotheses) {
  std::string target = path;
  for (size_t at = target.find("{step}"); at != std::string::npos; at = target.find("{step}"))
    target.replace(at, 6, std::to_string(step));
  std::vector<const std::string*> by_line;
  const std::string empty;
  if (text.lines.empty()) {
    for (const std::string& h : hypotheses) by_line.push_back(&h);
  } else {
    TD_CHECK(text.lines.size() == hypotheses.size(), "{} line numbers for {} translations",
             text.lines.size(), hypotheses.size());
    by_line.assign(static_cast<size_t>(text.file_lines), &empty);
    for (size_t i = 0; i < hypotheses.size(); ++i)
      by_line.at(static_cast<size_t>(text.lines[i])) = &hypotheses[i];
  }
  io::write_file_atomically(target, [&](std::FILE* f) {
    for (const std::string* line : by_line) {
      std::fwrite(line->data(), 1, line->size(), f);
      std::fputc('\n', f);
    }
  });
}

bool BestValidation::record(double value, int64_t at_step) {
  const bool better = !score || (lower_is_better(metric) ? value < *score : value > *score);
  if (better) {
    score = value;
    step = at_step;
    stale = 0;
  } else {
    ++stale;
  }
  return better;
}

nlohmann::json best_to_json(const BestValidation& b) {
  nlohmann::json j = {
      {"metric", valid_metric_name(b.metric)}, {"step", b.step}, {"stale", b.stale}};
  j["score"] = b.score ? nlohmann::json(*b.score) : nlohmann::json(nullptr);
  return j;
}

BestValidation best_from_json(const nlohmann::json& j, ValidMetric metric) {
  BestValidation b;
  b.metric = metric;
  if (!j.is_object())
    fail("the checkpoint's best validation should be a JSON object, not {}", j.type_name());
  const auto saved = j.find("metric");
  if (saved == j.end() || !saved->is_string() || !valid_metric_from_name(saved->get<std::string>()))
    fail("the checkpoint's best validation: metric must be \"ppl\", \"bleu\" or \"chrf\"");
  if (*valid_metric_from_name(saved->get<std::string>()) != metric) return b;
  const auto score = j.find("score");
  if (score != j.end() && !score->is_null()) {
    const std::optional<double> v = json_number<double>(*score);
    if (!v || !std::isfinite(*v))
      fail("the checkpoint's best validation: score must be a number, got {}", score->dump());
    b.score = *v;
  }
  for (const auto& [key, field] : {std::pair{"step", &b.step}, std::pair{"stale", &b.stale}}) {
    const auto it = j.find(key);
    const std::optional<int64_t> v = it == j.end() ? std::nullopt : json_number<int64_t>(*it);
    if (!v || *v < -1) fail("the checkpoint's best validation: {} must be a whole number", key);
    *field = *v;
  }
  return b;
}

}  // namespace transduce
