// A model directory with random weights (no training) over a vocabulary made by `transduce vocab`:
// enough for tests of the service and of the attention export, which check shapes, routing and
// agreement with the model rather than translation quality.
#pragma once

#include <cstdint>
#include <string>

#include "model/config.h"

namespace transduce::testing {

// A 2-layer, 4-head model with d_model 32 over the vocabulary's size, 128 positions.
ModelConfig small_random_config(int vocab_size);

// Writes MODEL_DIR/config.json, model.safetensors (weights drawn from `seed`) and spm.model (copied
// from VOCAB_DIR/spm.model).
void write_random_model(const std::string& vocab_dir, const std::string& model_dir,
                        uint64_t seed = 1);

}  // namespace transduce::testing
