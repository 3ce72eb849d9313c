// The vectorisable exp the softmax kernels use, against std::exp in double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/cpu/fast_exp.h"

namespace transduce::ops {
namespace {

TEST(FastExp, WithinThreeTenthsOfAMillionthOfExp) {
  double worst = 0;
  // Every 97th float bit pattern from -87 to 88 (x <= 0 is what the kernels feed it).
  for (float x = -87.0f; x < 88.0f;) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(fast_exp(x) - want) / want);
    const float next = std::nextafter(x, 100.0f);
    x = std::abs(x) < 1e-6f ? (x < 0 ? 1e-6f : std::nextafter(x, 100.0f)) : x + 97 * (next - x);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
}

TEST(FastExp, UnderflowsToZeroAndHandlesMinusInfinity) {
  EXPECT_EQ(fast_exp(-88.0f), 0.0f);
  EXPECT_EQ(fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_NEAR(fast_exp(-87.0f), std::exp(-87.0), 1e-6 * std::exp(-87.0));
}

}  // namespace
}  // namespace transduce::ops
