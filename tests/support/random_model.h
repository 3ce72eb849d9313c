// A model directory with random weights (no training) over a vocabulary made by `transduce vocab`:
// enough for tests of the service and of the attention export, which check shapes, routing and
// agreement with the model rather than translation quality.
#pragma once

#include <cstdint>
#include <string>

#include "model/config.h"
#include "support/toy_corpus.h"

namespace transduce::testing {

// A 2-layer, 4-head model with d_model 32 over the vocabulary's size, 128 positions.
ModelConfig small_random_config(int vocab_size);

// The model that reduced-precision tests compare with fp32: 2 layers, d_model 128, d_ff 512, 4
// heads, vocabulary 1000, 64 positions, no dropout (both runs must compute the same function),
// label smoothing 0.1. Its products are large enough to take every parallel path.
ModelConfig precision_test_config();

// Writes MODEL_DIR/config.json, model.safetensors (weights drawn from `seed`) and spm.model (copied
// from VOCAB_DIR/spm.model).
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
