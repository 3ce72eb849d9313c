// The int8 rule every quantizer in ops/cpu shares: one vector to int8 with a symmetric scale.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace transduce::ops {

// q[j] = round(x[j] / scale), scale = max_j |x[j]| / 127 (0 for a vector of zeros), returned.
inline float quantize_vector(const float* x, int64_t n, int8_t* q) {
  float largest = 0.0f;
#pragma omp simd reduction(max : largest)
  for (int64_t j = 0; j < n; ++j) largest = std::max(largest, std::fabs(x[j]));
  const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
  // Round half away from zero by truncating |v| + 0.5: |v| <= 127 fits int8, and the truncating
  // conversion vectorises where a call to nearbyint does not. The clamps (selects, not fmin/fmax
  // calls, so that the loop stays vectorised) keep a NaN or infinite input (a broken model) from
  // an undefined conversion.
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    float v = x[j] * inverse;
    v = v > 127.0f ? 127.0f : v;
    v = v < -127.0f ? -127.0f : v;
    v = v == v ? v : 0.0f;
    q[j] = static_cast<int8_t>(static_cast<int32_t>(v + std::copysign(0.5f, v)));
  }
  return largest / 127.0f;
}

}  // namespace transduce::ops
