// A model directory with random weights (no training) over a vocabulary made by `transduce vocab`:
// enough for tests of the service and of the attention export, which check shapes, routing and
// agreement with the model rather than translation quality.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"
#include "model/config.h"
#include "support/toy_corpus.h"

namespace transduce {
class Transformer;
}  // namespace transduce

namespace transduce::testing {

// An untrained model for tests that check numbers: Transformer::init_parameters(seed), then every
// bias (linear layers' and layer norms' shifts) drawn uniform in [-0.5, 0.5] and every layer-norm
// gain in [0.5, 1.5], from a stream of their own under `seed`. init_parameters makes biases and
// shifts 0 and gains 1, so a kernel that forgot any of them computed the same numbers and passed;
// with these, int8 products without their bias or layer norms without their gain or shift move
// the int8 model's logits by 50-60% (tests/model/int8_model_test.cc allows 4%). Two models of
// the same config given the same seed are equal.
void init_untrained(Transformer& model, uint64_t seed);

// A 2-layer, 4-head model with d_model 32 over the vocabulary's size, 128 positions.
ModelConfig small_random_config(int vocab_size);

// The smallest model the checkpoint and averaging tests save and load: 1 layer, d_model 8, d_ff
// 12, 2 heads, vocabulary 13, 16 positions.
ModelConfig tiny_config();

// The model that reduced-precision tests compare with fp32: 2 layers, d_model 128, d_ff 512, 4
// heads, vocabulary 1000, 64 positions, no dropout (both runs must compute the same function),
// label smoothing 0.1. Its products are large enough to take every parallel path.
ModelConfig precision_test_config();

// A precision_test_config model's logits [12, 18, 1000] for 12 random sentences of 20 source and
// 18 target tokens (ids below 1000), as translation computes them (Context::inference): what the
// int8 and packed-weight tests compare between two models.
Tensor translation_logits(Transformer& model);

// Writes MODEL_DIR/config.json, model.safetensors (weights from init_untrained(seed)) and
// spm.model (copied from VOCAB_DIR/spm.model).
void write_random_model(const std::string& vocab_dir, const std::string& model_dir,
                        uint64_t seed = 1);

// A temporary directory with the toy corpus (toy_corpus.h), its vocabulary in vocab/ and a random
// model over it in model/.
class RandomModelDir {
 public:
  explicit RandomModelDir(const std::string& prefix, uint64_t seed = 1);
  std::string path() const { return dir_.path(); }
  std::string vocab() const { return dir_.path() + "/vocab"; }
  std::string model() const { return dir_.path() + "/model"; }

 private:
  TempDir dir_;
};

}  // namespace transduce::testing
