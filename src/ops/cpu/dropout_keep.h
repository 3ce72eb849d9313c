// Which elements dropout keeps: the i-th draw of (seed, stream) is kept when the top 24 bits of
// its hash fall below (1 - p) * 2^24, so that a mask does not depend on the thread count, and
// dropout, dropout with the residual add, and word dropout (a draw a row) keep alike.
#pragma once

#include <cstdint>

#include "core/rng.h"

namespace transduce::ops {

class DropoutKeep {
 public:
  DropoutKeep(float p, uint64_t seed, uint64_t stream)
      : seed_(seed),
        stream_(stream),
        threshold_(static_cast<uint64_t>((1.0 - p) * 16777216.0)),
        inv_keep_(kept_scale(p)) {}

  bool keep(uint64_t i) const { return (hash_u64(seed_, stream_, i) >> 40) < threshold_; }
  // What a kept element is multiplied by (also in backward, which reads a saved mask).
  float inv_keep() const { return inv_keep_; }
  static float kept_scale(float p) { return 1.0f / (1.0f - p); }

 private:
  uint64_t seed_, stream_, threshold_;
  float inv_keep_;
};

}  // namespace transduce::ops
