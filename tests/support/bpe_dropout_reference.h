// BPE-dropout (Provilkov et al., 2020) written from its description, independently of
// SentencePiece, to predict how many pieces a sampled segmentation has: start from the
// characters, repeatedly take the adjacent pair whose merged piece ranks highest (the leftmost
// among equals), skip that merge with probability `dropout` (the pair is then gone until one of
// its two symbols changes), and stop when no pair is left to merge.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/rng.h"

namespace transduce::testing {

class BpeDropoutReference {
 public:
  // The merge ranks of a SentencePiece BPE model: its normal pieces and their scores (higher
  // merges first).
  explicit BpeDropoutReference(const std::string& model_path);

  // The number of pieces BPE-dropout cuts `text` into: `text` is already normalised, as the
  // vocabulary's own pieces spell it (spaces as U+2581), one symbol a code point to start with.
  int64_t pieces(std::string_view text, float dropout, SplitMix64& rng) const;

 private:
  std::unordered_map<std::string, float> scores_;
};

}  // namespace transduce::testing
