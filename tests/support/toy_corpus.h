// Test data for command-line tests: a temporary directory that removes itself, and a toy parallel
// corpus in it (each word mapped to an upper-case twin) with a vocabulary made by the binary.
#pragma once

#include <string>

namespace transduce::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix);  // under the system's temporary directory
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes DIR/train.src and DIR/train.tgt (`pairs` lines of 3 to 7 words each).
void write_toy_corpus(const std::string& dir, int pairs = 300);

// Runs `transduce vocab` on DIR/train.src and DIR/train.tgt into DIR/vocab; returns its output
// when it fails, an empty string when it succeeds.
std::string make_toy_vocab(const std::string& dir);

}  // namespace transduce::testing
