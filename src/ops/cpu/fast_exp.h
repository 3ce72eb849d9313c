// exp for float in a form the compiler vectorises (glibc's vector expf needs -ffast-math): 2^n
// times a degree-6 polynomial for e^r, |r| <= ln(2)/2. Relative error below 3e-7 where the result
// is a normal float; 0 below -87.33 (where exp is no longer a normal float). Kernels use it for
// softmax and log-sum-exp over rows, where x <= 0 after the row maximum is subtracted.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace transduce::ops {

inline float fast_exp(float x) {
  const bool underflow = x < -87.33f;
  x = std::clamp(x, -87.33f, 88.0f);
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (exact for |n| < 2^22).
  const float shifter = 12582912.0f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  // r = x - n ln 2, with ln 2 split so that n * hi is exact.
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return underflow ? 0.0f : p * scale;
}

}  // namespace transduce::ops
