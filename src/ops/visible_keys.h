// Which keys a query may attend to under the causal mask and a window (restricted
// self-attention): one contiguous range, before padding. masked_softmax, the fused attention
// kernels and training's banded score products all take their ranges from here.
#pragma once

#include <algorithm>
#include <cstdint>

namespace transduce::ops {

struct KeyRange {
  int64_t first = 0, end = 0;  // keys first .. end - 1; end >= first (empty when equal)
};

// The query at position `position` over lk keys: causal hides keys after it; a window > 0 hides
// keys more than `window` away.
inline KeyRange visible_keys(int64_t position, int64_t lk, bool causal, int64_t window) {
  KeyRange r{0, lk};
  if (causal) r.end = std::clamp<int64_t>(position + 1, 0, lk);
  if (window > 0) {
    r.first = std::clamp<int64_t>(position - window, 0, lk);
    if (!causal) r.end = std::clamp<int64_t>(position + window + 1, 0, lk);
  }
  r.end = std::max(r.end, r.first);
  return r;
}

}  // namespace transduce::ops
