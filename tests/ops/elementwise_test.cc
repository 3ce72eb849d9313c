// ReLU, dropout, additions and bias ops against values worked out in the test.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

using transduce::testing::from;
using transduce::testing::ThreadCountGuard;

TEST(OpsRelu, ForwardAndBackwardIncludingZero) {
  Tensor x = from({2, 3}, {-2.0f, 0.0f, 3.5f, -0.0f, 1e-30f, -1e-30f});
  Tensor y = Tensor::empty({2, 3});
  ops::relu_forward(x, y);
  const float want_y[6] = {0.0f, 0.0f, 3.5f, 0.0f, 1e-30f, 0.0f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.f32()[i], want_y[i]) << i;
  Tensor dy = from({2, 3}, {10, 20, 30, 40, 50, 60});
  Tensor dx = Tensor::empty({2, 3});
  ops::relu_backward(y, dy, dx);
  // x exactly 0 (either sign) gives gradient 0.
  const float want_dx[6] = {0, 0, 30, 0, 50, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(dx.f32()[i], want_dx[i]) << i;
}

TEST(OpsRelu, InPlaceForwardAndBackward) {
  SplitMix64 rng(51);
  Tensor x = random_tensor({100, 7}, rng);
  Tensor y = Tensor::empty({100, 7});
  ops::relu_forward(x, y);
  Tensor inplace = x.clone();
  ops::relu_forward(inplace, inplace);
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(inplace.f32()[i], y.f32()[i]) << i;
    EXPECT_EQ(y.f32()[i], std::max(x.f32()[i], 0.0f)) << i;
  }
  Tensor dy = random_tensor({100, 7}, rng);
  Tensor d = dy.clone();
  ops::relu_backward(y, d, d);
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_EQ(d.f32()[i], x.f32()[i] > 0 ? dy.f32()[i] : 0.0f) << i;
}

TEST(OpsDropout, ZeroProbabilityCopies) {
  SplitMix64 rng(52);
  Tensor x = random_tensor({13, 5}, rng);
  Tensor y = random_tensor({13, 5}, rng);
  ops::dropout_forward(x, y, Tensor(), 0.0f, 1, 2);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.f32()[i], x.f32()[i]) << i;
  Tensor dx = random_tensor({13, 5}, rng);
  ops::dropout_backward(y, Tensor(), 0.0f, dx);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(dx.f32()[i], x.f32()[i]) << i;
}

TEST(OpsDropout, KeepsAboutOneMinusPAndScalesKeptValues) {
  SplitMix64 rng(53);
  const int64_t n = 100000;
  const float p = 0.3f;
  Tensor x = random_tensor({n}, rng, 0.5f, 2.0f);  // never zero, so a kept value is non-zero
  Tensor y = Tensor::empty({n});
  Tensor mask = Tensor::empty({n}, DType::U8);
  ops::dropout_forward(x, y, mask, p, 1234, 7);
  int64_t kept = 0, bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t m = mask.u8()[i];
    if (m != 0 && m != 1) ++bad;
    if (m) {
      ++kept;
      if (std::abs(y.f32()[i] - x.f32()[i] / (1.0 - p)) > 1e-6 * std::abs(x.f32()[i])) ++bad;
    } else if (y.f32()[i] != 0.0f) {
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.01);
  // The two halves are kept at the same rate: the draw does not drift along the tensor.
  int64_t kept_first = 0;
  for (int64_t i = 0; i < n / 2; ++i) kept_first += mask.u8()[i];
  EXPECT_NEAR(static_cast<double>(kept_first) / (n / 2), 0.7, 0.015);
}

TEST(OpsDropout, SameSeedAndStreamRepeatOtherStreamsDiffer) {
  const int64_t n = 10000;
  Tensor x = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) x.f32()[i] = 1.0f;
  Tensor y = Tensor::empty({n});
  auto mask_of = [&](uint64_t seed, uint64_t stream) {
    Tensor m = Tensor::empty({n}, DType::U8);
    ops::dropout_forward(x, y, m, 0.3f, seed, stream);
    return m;
  };
  const Tensor a = mask_of(99, 5), again = mask_of(99, 5);
  const Tensor other_stream = mask_of(99, 6), other_seed = mask_of(100, 5);
  int64_t same = 0, diff_stream = 0, diff_seed = 0;
  for (int64_t i = 0; i < n; ++i) {
    same += a.u8()[i] == again.u8()[i];
    diff_stream += a.u8()[i] != other_stream.u8()[i];
    diff_seed += a.u8()[i] != other_seed.u8()[i];
  }
  EXPECT_EQ(same, n);
  // Independent masks disagree on 2 * 0.7 * 0.3 = 42% of elements.
  EXPECT_NEAR(static_cast<double>(diff_stream) / n, 0.42, 0.03);
  EXPECT_NEAR(static_cast<double>(diff_seed) / n, 0.42, 0.03);
}

TEST(OpsDropout, MaskDoesNotDependOnThreadCount) {
  ThreadCountGuard guard;
  const int64_t n = 50001;
  SplitMix64 rng(54);
  Tensor x = random_tensor({n}, rng);
  auto run = [&](int threads, Tensor& y, Tensor& m) {
    omp_set_num_threads(threads);
    y = Tensor::empty({n});
    m = Tensor::empty({n}, DType::U8);
    ops::dropout_forward(x, y, m, 0.1f, 42, 3);
  };
  Tensor y1, m1, y2, m2, y3, m3;
  run(1, y1, m1);
  run(2, y2, m2);
  run(3, y3, m3);
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    mismatches += m1.u8()[i] != m2.u8()[i] || m1.u8()[i] != m3.u8()[i];
    mismatches += y1.f32()[i] != y2.f32()[i] || y1.f32()[i] != y3.f32()[i];
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(OpsDropout, BackwardUsesTheMask) {
  const float p = 0.25f;
  Tensor dy = from({6}, {1, 2, 3, 4, 5, 6});
  Tensor mask = Tensor::empty({6}, DType::U8);
  const uint8_t m[6] = {1, 0, 0, 1, 1, 0};
  for (int i = 0; i < 6; ++i) mask.u8()[i] = m[i];
  Tensor dx = Tensor::empty({6});
  ops::dropout_backward(dy, mask, p, dx);
  const float want[6] = {1 / 0.75f, 0, 0, 4 / 0.75f, 5 / 0.75f, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(dx.f32()[i], want[i]) << i;

  // Forward then backward with the saved mask: dx = dy * y / x.
  SplitMix64 rng(55);
  const int64_t n = 1000;
  Tensor x = random_tensor({n}, rng, 1.0f, 2.0f), y = Tensor::empty({n});
  Tensor mk = Tensor::empty({n}, DType::U8);
  ops::dropout_forward(x, y, mk, p, 8, 9);
  Tensor g = random_tensor({n}, rng), dg = Tensor::empty({n});
  ops::dropout_backward(g, mk, p, dg);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(dg.f32()[i], g.f32()[i] * y.f32()[i] / x.f32()[i], 1e-5) << i;
}

// The residual's one-pass dropout-and-add is dropout_forward then add, mask and bits, at a
// model's size (4100 x 512, in parallel); p = 0 is the plain sum.
TEST(OpsDropout, DropoutAddIsDropoutThenAdd) {
  SplitMix64 rng(56);
  const int64_t rows = 4100, cols = 512;
  const Tensor x = random_tensor({rows, cols}, rng), res = random_tensor({rows, cols}, rng);
  Tensor dropped = Tensor::empty({rows, cols}), want = Tensor::empty({rows, cols});
  Tensor mask_want = Tensor::empty({rows, cols}, DType::U8);
  ops::dropout_forward(x, dropped, mask_want, 0.3f, 5, 6);
  ops::add(res, dropped, want);
  Tensor got = Tensor::empty({rows, cols}), mask = Tensor::empty({rows, cols}, DType::U8);
  ops::dropout_add(res, x, got, mask, 0.3f, 5, 6);
  ASSERT_EQ(0, std::memcmp(got.raw(), want.raw(), got.nbytes()));
  ASSERT_EQ(0, std::memcmp(mask.raw(), mask_want.raw(), mask.nbytes()));
  int64_t kept = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) kept += mask.u8()[i];
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(mask.numel()), 0.7, 0.005);

  ops::dropout_add(res, x, got, mask, 0.0f, 5, 6);
  for (int64_t i = 0; i < got.numel(); i += 997)
    ASSERT_EQ(got.f32()[i], res.f32()[i] + x.f32()[i]) << i;

  // Written over x, as a residual connection writes it over its sub-layer's output.
  const Tensor in_place = x.clone();
  ops::dropout_add(res, in_place, in_place, mask, 0.3f, 5, 6);
  ASSERT_EQ(0, std::memcmp(in_place.raw(), want.raw(), want.nbytes()));
  ASSERT_EQ(0, std::memcmp(mask.raw(), mask_want.raw(), mask.nbytes()));
}

TEST(OpsElementwise, AddAxpyScale) {
  Tensor a = from({2, 2}, {1, 2, 3, 4}), b = from({2, 2}, {0.5f, -1, 10, 0});
  Tensor out = Tensor::empty({2, 2});
  ops::add(a, b, out);
  const float sum[4] = {1.5f, 1, 13, 4};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.f32()[i], sum[i]) << i;
  ops::add(a, b, a);  // out aliasing a
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.f32()[i], sum[i]) << i;

  ops::axpy(-2.0f, b, a);  // a = sum - 2 b
  const float ax[4] = {0.5f, 3, -7, 4};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.f32()[i], ax[i]) << i;

  ops::scale(a, 0.5f);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.f32()[i], ax[i] * 0.5f) << i;

  // 3000 elements, below parallel_worth_it: the serial path (threaded_ops_test.cc runs the
  // threaded one).
  SplitMix64 rng(56);
  Tensor u = random_tensor({3000}, rng), v = random_tensor({3000}, rng), w = u.clone();
  ops::axpy(0.25f, v, w);
  for (int64_t i = 0; i < 3000; ++i)
    EXPECT_FLOAT_EQ(w.f32()[i], u.f32()[i] + 0.25f * v.f32()[i]) << i;
}

TEST(OpsElementwise, FillRowsWritesTheBiasIntoEveryRow) {
  SplitMix64 rng(57);
  Tensor x = random_tensor({3, 4, 5}, rng), bias = random_tensor({5}, rng);
  ops::fill_rows(x, bias);
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(x.f32()[r * 5 + j], bias.f32()[j]) << r << "," << j;
}

TEST(OpsElementwise, BiasGradAccumulatesColumnSums) {
  SplitMix64 rng(58);
  const int64_t rows = 1001, n = 7;
  Tensor dy = random_tensor({rows, n}, rng);
  Tensor db = random_tensor({n}, rng);
  const Tensor db0 = db.clone();
  ops::bias_grad(dy, db);
  ops::bias_grad(dy, db);
  for (int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (int64_t r = 0; r < rows; ++r) col += dy.f32()[r * n + j];
    EXPECT_NEAR(db.f32()[j], db0.f32()[j] + 2 * col, 1e-3) << j;
  }
  // Tiny hand case.
  Tensor d2 = from({2, 3}, {1, 2, 3, 4, 5, 6}), b2 = from({3}, {100, 0, -1});
  ops::bias_grad(d2, b2);
  EXPECT_EQ(b2.f32()[0], 105.0f);
  EXPECT_EQ(b2.f32()[1], 7.0f);
  EXPECT_EQ(b2.f32()[2], 8.0f);
}

}  // namespace
}  // namespace transduce
