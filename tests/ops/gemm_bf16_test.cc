// ops::gemm on BF16 operands (oneDNN) and ops::to_bf16: against a double product of the same
// bf16-rounded numbers (exact but for fp32 summation), and against the fp32 GEMM on the unrounded
// numbers within the bound bf16's rounding implies. The sizes take the parallel paths, at 1, 2 and
// 3 threads. Each product names the kernel that ran it; on a CPU with bf16 dot products the
// widened fallback (which is checked on every CPU) may not be what ops::gemm ran.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/cpu/gemm_bf16.h"
#include "ops/ops.h"
#include "support/bf16_tensor.h"
#include "support/cpu_features.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using transduce::testing::bf16_of;
using transduce::testing::random_tensor;
using transduce::testing::value_at;

constexpr double kU32 = 1.0 / (1 << 24);  // fp32's unit roundoff
constexpr double kU16 = 1.0 / (1 << 8);   // bf16's (8 significant bits)

// Element (i, j) of op(t), t read as a [rows, cols] matrix.
double op_at(const Tensor& t, bool trans, int64_t i, int64_t j) {
  return trans ? value_at(t, j * t.cols() + i) : value_at(t, i * t.cols() + j);
}

struct Reference {
  std::vector<double> c;        // alpha op(a) op(b) + beta c0, in double
  std::vector<double> abs_sum;  // |alpha| sum |a||b| + |beta c0|: what rounding errors scale with
};

Reference reference(const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor& c0,
                    double alpha, double beta) {
  const int64_t m = ta ? a.cols() : a.rows(), k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  Reference r{std::vector<double>(static_cast<size_t>(m * n)),
              std::vector<double>(static_cast<size_t>(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, abs = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = op_at(a, ta, i, p) * op_at(b, tb, p, j);
        s += x;
        abs += std::fabs(x);
      }
      const double old = c0.f32()[i * n + j];
      r.c[static_cast<size_t>(i * n + j)] = alpha * s + beta * old;
      r.abs_sum[static_cast<size_t>(i * n + j)] = std::fabs(alpha) * abs + std::fabs(beta * old);
    }
  return r;
}

struct Case {
  bool ta, tb;
  float alpha, beta;
};

std::string name(const Case& c, int threads) {
  return "ta=" + std::to_string(c.ta) + " tb=" + std::to_string(c.tb) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
         " threads=" + std::to_string(threads);
}

// Every transposition the model uses (x W^T, dy^T x, dy W) and the fourth, with and without
// alpha and accumulation into C, on shapes of a real layer's order (192 x 160 x 136: 4M
// multiply-adds, parallel in oneDNN and in to_bf16).
TEST(OpsGemmBf16, MatchesADoubleProductOfTheRoundedInputs) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(3);
  const int64_t m = 192, n = 160, k = 136;
  const Case cases[] = {{false, true, 1, 1}, {true, false, 1, 1},      {false, false, 1, 0},
                        {true, true, 1, 0},  {false, true, 0.125f, 0}, {false, false, 2.5f, 0.5f}};
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    for (const Case& cs : cases) {
      const Tensor a = bf16_of(random_tensor(cs.ta ? Shape{k, m} : Shape{m, k}, rng));
      const Tensor b = bf16_of(random_tensor(cs.tb ? Shape{n, k} : Shape{k, n}, rng));
      Tensor c = random_tensor({m, n}, rng, -3.0f, 3.0f);
      const Tensor c0 = c.clone();
      Tensor widened = c.clone();
      ops::gemm(a, cs.ta, b, cs.tb, c, cs.alpha, cs.beta);
      testing::expect_native_kernel("bf16 gemm", name(cs, threads),
                                    ops::bf16_gemm_kernel(m, n, k, cs.ta, cs.tb, cs.alpha, cs.beta),
                                    testing::cpu_has_bf16_dot_products(), "widened");
      // What a CPU without bf16 instructions runs, on every CPU.
      ops::gemm_bf16_widened(a, cs.ta, b, cs.tb, widened, m, n, k, cs.alpha, cs.beta);
      const Reference want = reference(a, cs.ta, b, cs.tb, c0, cs.alpha, cs.beta);
      // Products of bf16 numbers are exact in fp32; only the fp32 sums round: the classic bound
      // gamma_{k+2} = (k + 2) u times the sum of magnitudes, whatever the order of the sums.
      for (const Tensor* got : {&c, &widened}) {
        int bad = 0;
        for (int64_t i = 0; i < got->numel() && bad < 5; ++i) {
          const double tol = (k + 2) * kU32 * want.abs_sum[i] + 1e-30;
          if (std::fabs(got->f32()[i] - want.c[i]) > tol) {
            ADD_FAILURE() << name(cs, threads) << (got == &c ? " gemm" : " widened") << " element "
                          << i << ": " << got->f32()[i] << " vs " << want.c[i] << " (bound " << tol
                          << ")";
            ++bad;
          }
        }
      }
    }
  }
}

// The same products from the unrounded fp32 numbers: within what rounding each input to bf16 can
// do (each product off by at most (2 u16 + u16^2) of its magnitude), and further from the fp32
// GEMM than fp32 rounding alone would be (so bf16 really is what ran).
TEST(OpsGemmBf16, AgreesWithTheFp32GemmWithinBf16Rounding) {
  testing::ThreadCountGuard guard;
  set_threads(2);
  SplitMix64 rng(5);
  const int64_t m = 256, n = 96, k = 512;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Tensor a = random_tensor(ta ? Shape{k, m} : Shape{m, k}, rng);
      const Tensor b = random_tensor(tb ? Shape{n, k} : Shape{k, n}, rng);
      Tensor c16 = Tensor::zeros({m, n}), c32 = Tensor::zeros({m, n});
      ops::gemm(bf16_of(a), ta, bf16_of(b), tb, c16);
      testing::expect_native_kernel(
          "bf16 gemm",
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
              " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb),
          ops::bf16_gemm_kernel(m, n, k, ta, tb), testing::cpu_has_bf16_dot_products(), "widened");
      ops::gemm(a, ta, b, tb, c32);
      const Reference exact = reference(a, ta, b, tb, c32, 1.0, 0.0);
      double worst_share = 0, largest_fp32_error = 0, largest_difference = 0;
      for (int64_t i = 0; i < c16.numel(); ++i) {
        const double bound = (2 * kU16 + kU16 * kU16 + 2 * (k + 2) * kU32) * exact.abs_sum[i];
        const double diff = std::fabs(c16.f32()[i] - exact.c[i]);
        worst_share = std::max(worst_share, diff / bound);
        largest_fp32_error = std::max(largest_fp32_error, std::fabs(c32.f32()[i] - exact.c[i]));
        largest_difference = std::max(largest_difference,
                                      std::fabs(static_cast<double>(c16.f32()[i]) - c32.f32()[i]));
      }
      EXPECT_LE(worst_share, 1.0) << "ta=" << ta << " tb=" << tb;
      EXPECT_GT(largest_difference, 100 * largest_fp32_error)
          << "ta=" << ta << " tb=" << tb << ": the bf16 GEMM looks like an fp32 one";
    }
}

TEST(OpsGemmBf16, MixedOrMistypedOperandsAreRefused) {
  const Tensor a = Tensor::zeros({4, 3}), b = Tensor::zeros({3, 2}), c = Tensor::zeros({4, 2});
  EXPECT_THROW(ops::gemm(bf16_of(a), false, b, false, c), Error);
  EXPECT_THROW(ops::gemm(a, false, bf16_of(b), false, c), Error);
  EXPECT_THROW(ops::gemm(bf16_of(a), false, bf16_of(b), false, Tensor::zeros({4, 2}, DType::BF16)),
               Error);
}

// Hand-worked roundings: bf16 keeps 8 significant bits, so near 1 its step is 2^-7.
TEST(OpsToBf16, RoundsToNearestEvenAndKeepsSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, float>> cases = {
      {1.0f, 1.0f},
      {1.0f + 0x1p-8f, 1.0f},                       // a tie: to the even 1.0
      {1.0f + 0x1p-7f + 0x1p-8f, 1.0f + 0x1p-6f},   // a tie: to the even 1 + 2^-6
      {1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-7f},  // just above the tie: up
      {-(1.0f + 0x1p-8f + 0x1p-20f), -(1.0f + 0x1p-7f)},
      {3.14159265f, 3.140625f},
      {0x1p-130f, 0x1p-130f},                    // subnormals keep their top bits
      {std::numeric_limits<float>::max(), inf},  // past bf16's largest finite: infinity
      {inf, inf},
      {-inf, -inf},
      {-0.0f, -0.0f}};
  Tensor src = Tensor::empty({static_cast<int64_t>(cases.size())});
  for (size_t i = 0; i < cases.size(); ++i) src.f32()[i] = cases[i].first;
  const Tensor got = bf16_of(src);
  for (size_t i = 0; i < cases.size(); ++i) {
    const float g = bf16_to_float(got.bf16()[i]);
    EXPECT_EQ(g, cases[i].second) << "case " << i << ": " << cases[i].first;
    EXPECT_EQ(std::signbit(g), std::signbit(cases[i].second)) << "case " << i;
  }
  Tensor nan = Tensor::empty({2});
  nan.f32()[0] = std::numeric_limits<float>::quiet_NaN();
  nan.f32()[1] = -std::numeric_limits<float>::quiet_NaN();
  const Tensor n16 = bf16_of(nan);
  EXPECT_TRUE(std::isnan(bf16_to_float(n16.bf16()[0])));
  EXPECT_TRUE(std::isnan(bf16_to_float(n16.bf16()[1])));
}

// The parallel conversion (above the parallel threshold) agrees with one element at a time, and
// rounding error stays within half a step, at most 2^-8 |x| (the step is 2^-7 of the power of two
// at or below |x|).
TEST(OpsToBf16, ThreadedConversionAgreesElementwise) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(9);
  const Tensor src = random_tensor({1000, 131}, rng, -50.0f, 50.0f);
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    const Tensor got = bf16_of(src);
    for (int64_t i = 0; i < src.numel(); ++i) {
      ASSERT_EQ(got.bf16()[i], float_to_bf16(src.f32()[i])) << "threads " << threads << " at " << i;
      ASSERT_LE(std::fabs(bf16_to_float(got.bf16()[i]) - src.f32()[i]),
                std::ldexp(std::fabs(src.f32()[i]), -8))
          << i;
    }
  }
}

// The ReLU fused with the rounding (a bf16 model's FFN hidden layer), hand-worked values, and the
// ReLU's backward reading that bf16 output: the gradient passes where the output is above zero.
TEST(OpsReluToBf16, RoundsTheReluAndItsBackwardReadsTheBf16Output) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, float>> cases = {
      {-2.0f, 0.0f},
      {-0.0f, 0.0f},  // a ReLU of -0 is +0: nothing passes backward
      {0.0f, 0.0f},
      {1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-7f},  // rounded as to_bf16 rounds
      {0x1p-130f, 0x1p-130f},                       // a subnormal stays above zero
      {0x1p-134f, 0.0f},                            // under half the least bf16: zero
      {inf, inf},
      {-inf, 0.0f},
      {std::numeric_limits<float>::quiet_NaN(), 0.0f}};
  const auto n = static_cast<int64_t>(cases.size());
  Tensor src = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) src.f32()[i] = cases[static_cast<size_t>(i)].first;
  Tensor out = Tensor::empty({n}, DType::BF16);
  ops::relu_to_bf16(src, out);
  Tensor dy = Tensor::empty({n}), dx = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) dy.f32()[i] = static_cast<float>(i + 1);
  ops::relu_backward(out, dy, dx);
  for (int64_t i = 0; i < n; ++i) {
    const float want = cases[static_cast<size_t>(i)].second;
    const float got = bf16_to_float(out.bf16()[i]);
    EXPECT_EQ(got, want) << "case " << i;
    EXPECT_FALSE(std::signbit(got)) << "case " << i;
    EXPECT_EQ(dx.f32()[i], want > 0.0f ? dy.f32()[i] : 0.0f) << "case " << i;
  }
  EXPECT_THROW(ops::relu_to_bf16(src, Tensor::empty({n})), Error);
}

// At a size that takes the threaded paths: relu_to_bf16 is to_bf16 of the fp32 ReLU, and the
// backward through its output equals the backward through the fp32 ReLU's (no value of a
// uniform draw is small enough to round to zero).
TEST(OpsReluToBf16, ThreadedAgreesWithTheFp32Relu) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(10);
  const Tensor src = random_tensor({1000, 131}, rng, -5.0f, 5.0f);
  const Tensor dy = random_tensor({1000, 131}, rng);
  Tensor relu = Tensor::empty({1000, 131});
  ops::relu_forward(src, relu);
  Tensor want_dx = Tensor::empty({1000, 131});
  ops::relu_backward(relu, dy, want_dx);
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    Tensor out = Tensor::empty({1000, 131}, DType::BF16), dx = Tensor::empty({1000, 131});
    ops::relu_to_bf16(src, out);
    ops::relu_backward(out, dy, dx);
    for (int64_t i = 0; i < src.numel(); ++i) {
      ASSERT_EQ(out.bf16()[i], float_to_bf16(relu.f32()[i]))
          << "threads " << threads << " at " << i;
      ASSERT_EQ(dx.f32()[i], want_dx.f32()[i]) << "threads " << threads << " at " << i;
    }
  }
}

}  // namespace
}  // namespace transduce
