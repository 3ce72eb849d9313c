// The model hyper-parameter flags shared by every subcommand that builds a model, and
// --compute-type for those that translate.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "model/config.h"
#include "model/model_choice.h"
#include "model/precision.h"

namespace transduce::cli {

// A flag for each hyper-parameter of model/model_choice.h (--preset, --layers, --d-model...),
// writing into `into`, whose values at this call the help shows as defaults. `with_vocab_size`
// false leaves out --vocab-size, for commands whose vocabulary comes from a SentencePiece model
// (and whose --vocab names its directory).
void add_model_flags(CLI::App& app, ModelChoice& into, bool with_vocab_size = true);
// into.resolve(), its errors naming the flags.
ModelConfig resolve_model(const ModelChoice& choice);

// --compute-type for the commands that translate: fp32, bf16 or int8 (the choices checked by
// CLI11). For a model directory, an empty choice means the model's own type (LoadedModel).
void add_compute_type(CLI::App& app, std::string& into);
std::optional<Precision> compute_type_choice(const std::string& name);

}  // namespace transduce::cli
