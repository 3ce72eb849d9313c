// Subword regularisation for training: the training pairs segmented anew every epoch by sampling
// (BPE-dropout for a BPE vocabulary, lattice sampling for a unigram one; Tokenizer::sample_encode),
// so the model sees many segmentations of each sentence and decodes with the deterministic one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/example.h"

namespace transduce {

class Tokenizer;

class SubwordSampler {
 public:
  // `src` and `tgt` are the raw lines of the pairs that training keeps, in the order of its
  // examples; `max_len` and the meaning of the tokens are encode_parallel's. Keeps a reference to
  // `tok`, which must outlive the sampler. Throws Error when alpha is outside (0, 1) or the sides
  // differ in length.
  SubwordSampler(const Tokenizer& tok, std::vector<std::string> src, std::vector<std::string> tgt,
                 int max_len, float alpha, uint64_t seed);

  // The examples of epoch `epoch` (0-based), written over `examples` (resized to the pairs): a
  // pure function of (text, vocabulary, alpha, seed, epoch), whatever the number of threads, so
  // a resumed run sees the segmentations the uninterrupted one did. A side whose sample is
  // longer than max_len keeps its deterministic segmentation (which was within it).
  void encode_epoch(int64_t epoch, std::vector<Example>& examples) const;

  float alpha() const { return alpha_; }

 private:
  const Tokenizer& tok_;
  std::vector<std::string> src_, tgt_;
  int max_len_;
  float alpha_;
  uint64_t seed_;
};

}  // namespace transduce
