// Per-thread reusable scratch memory for kernels, so repeated calls do not allocate.
#pragma once

#include <cstddef>
#include <vector>

namespace transduce::ops {

// A zero-filled buffer of at least n floats, owned by the calling thread and reused across calls;
// valid until that thread's next call.
inline float* zeroed_scratch(size_t n) {
  static thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  std::fill(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n), 0.0f);
  return buffer.data();
}

}  // namespace transduce::ops
