// bfloat16: the top 16 bits of an IEEE float (8-bit exponent, 7 stored mantissa bits).
#pragma once

#include <cstdint>
#include <cstring>

namespace transduce {

// Rounds to nearest, ties to even (what AVX512-BF16's conversions and PyTorch do); a NaN stays a
// (quiet) NaN instead of rounding into an infinity.
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The float nearest to f that bf16 can hold.
inline float round_to_bf16(float f) {
  return bf16_to_float(float_to_bf16(f));
}

}  // namespace transduce
