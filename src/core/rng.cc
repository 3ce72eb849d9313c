#include "core/rng.h"

#include <cmath>

namespace transduce {

float SplitMix64::normal() {
  // 1 - u keeps the logarithm finite.
  float u1 = 1.0f - uniform();
  float u2 = uniform();
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}

}  // namespace transduce
