// A parser's model directory with random weights: a vocabulary made by `transduce vocab --trees`
// on the first trees of the Penn Treebank sample, a small random model over it, and parse.json.
// Enough for tests of decoding, restoring and the command line, which check structure, not
// parsing quality.
#pragma once

#include <cstdint>
#include <string>

#include "support/toy_corpus.h"

namespace transduce::testing {

class RandomParserDir {
 public:
  // `trees` trees of ptb-sample/train.trees are copied to DIR/train.trees.
  explicit RandomParserDir(const std::string& prefix, int trees = 300, uint64_t seed = 1);
  std::string path() const { return dir_.path(); }
  std::string trees() const { return dir_.path() + "/train.trees"; }
  std::string vocab() const { return dir_.path() + "/vocab"; }
  std::string model() const { return dir_.path() + "/model"; }

 private:
  TempDir dir_;
};

}  // namespace transduce::testing
