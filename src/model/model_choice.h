// A model's hyper-parameters as a person chooses them: a preset (Table 3's base or big, or tiny),
// with any of Table 3's names overriding it. Declared once (model_choice_specs()), so that the
// flags of train, params and bench, configuration files and Python's train() read them alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/option_spec.h"
#include "model/config.h"

namespace transduce {

struct ModelChoice {
  std::string preset = "base";
  std::optional<int> layers, d_model, d_ff, heads, d_k, d_v, vocab_size, max_positions,
      attention_window;
  std::optional<float> dropout, attention_dropout, relu_dropout, label_smoothing;
  std::optional<float> src_word_dropout, tgt_word_dropout;
  std::optional<std::string> positions, norm;

  // The preset with the choices applied, validated. d_k and d_v follow d_model / heads unless
  // set, so `d_model: 256` alone gives Table 3's row with d_k = d_v = 32.
  ModelConfig resolve() const;
};

// Every hyper-parameter, in the order `transduce train --help` lists them.
const std::vector<OptionSpec<ModelChoice>>& model_choice_specs();

// Their keys, without vocab_size when `with_vocab_size` is false (a vocabulary's model has the
// vocabulary's size).
std::vector<std::string> model_choice_keys(bool with_vocab_size = true);

}  // namespace transduce
