// The model hyper-parameter flags shared by every subcommand that builds a model: a preset and
// Table 3's names, each flag overriding the preset.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "model/config.h"
#include "model/precision.h"

namespace transduce::cli {

struct ModelFlags {
  std::string preset = "base";
  std::optional<int> layers, d_model, d_ff, heads, d_k, d_v, vocab, max_positions, attention_window;
  std::optional<float> dropout, attention_dropout, relu_dropout, label_smoothing;
  std::optional<float> src_word_dropout, tgt_word_dropout;
  std::optional<std::string> positions, norm;

  // `with_vocab_size` false leaves out --vocab-size, for commands whose vocabulary comes from a
  // SentencePiece model (and whose --vocab names its directory).
  void add_to(CLI::App& app, bool with_vocab_size = true);
  // The preset with the given flags applied, validated. d_k and d_v follow d_model / heads
  // unless set, so `--d-model 256` alone gives Table 3's row with d_k = d_v = 32.
  ModelConfig resolve() const;
};

// --compute-type for the commands that translate: fp32, bf16 or int8 (the choices checked by
// CLI11). For a model directory, an empty choice means the model's own type (LoadedModel).
void add_compute_type(CLI::App& app, std::string& into);
std::optional<Precision> compute_type_choice(const std::string& name);

}  // namespace transduce::cli
