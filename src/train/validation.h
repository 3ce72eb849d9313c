// Validation by the metric a user cares about (`transduce train --valid-metric`): perplexity, or
// BLEU / chrF of the validation set translated with the current weights, and the bookkeeping of
// the best validation so far for MODEL_DIR/best/ and --patience.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/search.h"
#include "dist/communicator.h"
#include "model/transformer.h"
#include "text/example.h"

namespace transduce {

enum class ValidMetric { kPerplexity, kBleu, kChrf };

std::string_view valid_metric_name(ValidMetric m);  // "ppl", "bleu", "chrf"
std::optional<ValidMetric> valid_metric_from_name(std::string_view name);
// Perplexity improves downwards, BLEU and chrF upwards.
bool lower_is_better(ValidMetric m);
// Whether any of `metrics` needs the validation set translated.
bool needs_translation(const std::vector<ValidMetric>& metrics);

// What translating the validation set needs beside the model and its examples: the reference
// translations (raw text, one per validation example), how pieces become text, and where each
// example came from in the validation files (0-based lines, of `file_lines`), so that
// --valid-output keeps line i on line i even when pairs were skipped.
struct ValidText {
  std::vector<std::string> references;
  std::function<std::string(const std::vector<int32_t>&)> detokenize;
  std::vector<int64_t> lines;
  int64_t file_lines = 0;
};

struct ValidTranslations {
  std::vector<std::string> hypotheses;  // one per validation example, detokenized
  double bleu = 0;                      // sacreBLEU's corpus BLEU, cased, 13a
  double chrf = 0;                      // sacreBLEU's corpus chrF2
};

// Translates the sources of `valid` with `model` as it stands (rank r of `comm` translates every
// K-th sentence; the outputs are then shared, so every rank ends with all of them and the same
// scores) and scores them against text.references.
ValidTranslations translate_validation(Transformer& model, const std::vector<Example>& valid,
                                       const ValidText& text, const SearchOptions& search,
                                       int64_t batch_tokens, Communicator& comm);

// Writes the hypotheses to `path` atomically, line i of the validation files on line i (skipped
// pairs as empty lines). "{step}" in the path becomes the update number.
void write_valid_output(const std::string& path, int64_t step, const ValidText& text,
                        const std::vector<std::string>& hypotheses);

// The best validation so far by the deciding metric, and how many validations since have not
// improved on it; saved in checkpoints so that a resumed run goes on counting.
struct BestValidation {
  ValidMetric metric = ValidMetric::kPerplexity;
  std::optional<double> score;  // none before the first validation
  int64_t step = -1;
  int64_t stale = 0;  // validations since the best that did not improve on it

  // Records a validation at `step`; true when it improves on the best (strictly; the first
  // always does).
  bool record(double value, int64_t at_step);
  // Whether --patience N (N > 0) ends the run: N validations in a row without improvement.
  bool out_of_patience(int patience) const { return patience > 0 && stale >= patience; }
};

nlohmann::json best_to_json(const BestValidation& b);
// Restores what best_to_json saved when it was kept for the same metric; a record for another
// metric (the run was resumed with another --valid-metric) starts afresh. Malformed input fails
// with one line.
BestValidation best_from_json(const nlohmann::json& j, ValidMetric metric);

}  // namespace transduce
