#include "cli/model_flags.h"

#include "cli/option_flags.h"
#include "core/error.h"
#include "core/option_names.h"

namespace transduce::cli {

void add_model_flags(CLI::App& app, ModelChoice& into, bool with_vocab_size) {
  add_option_flags(app, model_choice_specs(), into, model_choice_keys(with_vocab_size), into);
}

ModelConfig resolve_model(const ModelChoice& choice) {
  try {
    return choice.resolve();
  } catch (const Error& e) {
    fail("{}", name_options(e.what(), option_keys(model_choice_specs()), flag_of_key));
  }
}

void add_compute_type(CLI::App& app, std::string& into) {
  app.add_option("--compute-type", into,
                 "fp32 | bf16 | int8: what the matrix products compute in (bf16 and int8 copies "
                 "of the weights are made at load; int8 quantizes weights per output row and "
                 "activations per row; for a model directory the default is the model's own "
                 "type: fp32, or what `transduce quantize` stored)")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
      ->capture_default_str();
}

std::optional<Precision> compute_type_choice(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_compute_type(name);
}

}  // namespace transduce::cli
