// A stand-in Communicator for in-process tests: K ranks that all hold this process's values, so a
// sum multiplies by K. Whether they agree is set by the test.
#pragma once

#include <cstdlib>
#include <vector>

#include "dist/communicator.h"

namespace transduce::testing {

class IdenticalRanks final : public Communicator {
 public:
  explicit IdenticalRanks(int ranks) : ranks_(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  void sum(float* data, int64_t n, const char*) override {
    for (int64_t i = 0; i < n; ++i) data[i] *= static_cast<float>(ranks_);
    sizes.push_back(n);
  }
  void sum(double* data, int64_t n, const char*) override {
    for (int64_t i = 0; i < n; ++i) data[i] *= ranks_;
  }
  void broadcast(void*, int64_t, const char*) override {}
  bool agree(uint64_t, const char*) override { return agreeing; }
  [[noreturn]] void abort(int) override { std::abort(); }

  std::vector<int64_t> sizes;  // elements of each float sum, in call order
  bool agreeing = true;

 private:
  int ranks_;
};

}  // namespace transduce::testing
