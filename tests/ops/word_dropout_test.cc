// Word dropout zeroes or keeps whole rows (a token's embedding), at rate p, the same on any thread
// count, and its backward applies the forward's mask.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using testing::random_tensor;
using testing::ThreadCountGuard;

TEST(OpsWordDropout, RowsAreKeptWholeAndScaledOrZeroedWhole) {
  SplitMix64 rng(61);
  // 40,000 tokens of a 2 x 20,000 batch with a 16-wide embedding: a training batch's size.
  const int64_t rows = 40000, width = 16;
  const float p = 0.2f;
  Tensor x = random_tensor({2, rows / 2, width}, rng, 0.5f, 2.0f);  // never zero
  Tensor y = Tensor::empty(x.shape()), mask = Tensor::empty({rows}, DType::U8);
  ops::word_dropout_forward(x, y, mask, p, 77, 4);
  int64_t kept = 0, bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t m = mask.u8()[r];
    if (m > 1) ++bad;
    kept += m;
    for (int64_t i = 0; i < width; ++i) {
      const float xi = x.f32()[r * width + i], yi = y.f32()[r * width + i];
      if (m ? std::abs(yi - xi / (1.0 - p)) > 1e-6 * xi : yi != 0.0f) ++bad;
    }
  }
  EXPECT_EQ(bad, 0);
  // Binomial(40000, 0.8): standard deviation 0.002 of the rate; 0.01 is 5 of them.
  EXPECT_NEAR(static_cast<double>(kept) / rows, 1.0 - p, 0.01);
}

TEST(OpsWordDropout, MaskFollowsSeedAndStreamNotThreadCount) {
  ThreadCountGuard guard;
  SplitMix64 rng(62);
  const int64_t rows = 30001, width = 8;
  Tensor x = random_tensor({rows, width}, rng);
  auto run = [&](int threads, uint64_t seed, uint64_t stream, Tensor& y) {
    omp_set_num_threads(threads);
    y = Tensor::empty(x.shape());
    Tensor m = Tensor::empty({rows}, DType::U8);
    ops::word_dropout_forward(x, y, m, 0.3f, seed, stream);
    return m;
  };
  Tensor y1, y2, y3, y4;
  const Tensor m1 = run(1, 5, 6, y1), m2 = run(2, 5, 6, y2), m3 = run(3, 5, 6, y3);
  const Tensor other = run(2, 5, 7, y4);
  int64_t mismatches = 0, differ = 0;
  for (int64_t r = 0; r < rows; ++r) {
    mismatches += m1.u8()[r] != m2.u8()[r] || m1.u8()[r] != m3.u8()[r];
    differ += m1.u8()[r] != other.u8()[r];
  }
  for (int64_t i = 0; i < x.numel(); ++i)
    mismatches += y1.f32()[i] != y2.f32()[i] || y1.f32()[i] != y3.f32()[i];
  EXPECT_EQ(mismatches, 0);
  // Independent masks disagree on 2 * 0.7 * 0.3 = 42% of rows.
  EXPECT_NEAR(static_cast<double>(differ) / rows, 0.42, 0.03);
}

TEST(OpsWordDropout, BackwardAppliesTheForwardsMask) {
  const float p = 0.4f;
  Tensor dy = Tensor::empty({3, 2});
  for (int i = 0; i < 6; ++i) dy.f32()[i] = static_cast<float>(i + 1);
  Tensor mask = Tensor::empty({3}, DType::U8);
  mask.u8()[0] = 0;
  mask.u8()[1] = 1;
  mask.u8()[2] = 0;
  Tensor dx = Tensor::empty({3, 2});
  ops::word_dropout_backward(dy, mask, p, dx);
  const float want[6] = {0, 0, 3 / 0.6f, 4 / 0.6f, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(dx.f32()[i], want[i]) << i;

  // p == 0: forward and backward copy.
  SplitMix64 rng(63);
  Tensor x = random_tensor({4, 5}, rng), y = Tensor::empty({4, 5});
  ops::word_dropout_forward(x, y, Tensor(), 0.0f, 1, 2);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.f32()[i], x.f32()[i]) << i;
  ops::word_dropout_backward(x, Tensor(), 0.0f, y);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.f32()[i], x.f32()[i]) << i;
}

TEST(OpsWordDropout, AMaskOfTheWrongLengthIsRefused) {
  Tensor x = Tensor::zeros({3, 4}), y = Tensor::empty({3, 4});
  Tensor mask = Tensor::empty({4}, DType::U8);
  EXPECT_ANY_THROW(ops::word_dropout_forward(x, y, mask, 0.5f, 1, 2));
}

}  // namespace
}  // namespace transduce
