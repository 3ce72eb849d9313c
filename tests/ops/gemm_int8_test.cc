// The int8 products for inference (ops::quantize_rows, quantize_matrix, gemm_int8): quantization
// against its definition, the product against a double product of the same quantized integers
// (exact but for the fp32 scaling at the end), and against the fp32 GEMM within the bound the
// scales imply. Row counts cover the buckets the products are made for (padding rows included) and
// inputs of several 256-row blocks; sizes are a base model's layers, at 1, 2 and 3 threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "support/cpu_features.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

constexpr double kU32 = 1.0 / (1 << 24);  // fp32's unit roundoff

struct Quantized {
  Tensor q, scales;
};

Quantized quantize(const Tensor& x) {
  Quantized out{Tensor::empty(x.shape(), DType::I8), Tensor::empty({x.rows()})};
  ops::quantize_rows(x, out.q, out.scales);
  return out;
}

// W quantized and packed for gemm_int8; with `release`, its plain integers then dropped, as a
// translating model does (Transformer::set_precision).
ops::Int8Matrix packed(const Tensor& w, bool release = false) {
  ops::Int8Matrix m = ops::quantize_matrix(w);
  ops::pack_int8(m);
  if (release) m.q = Tensor();
  return m;
}

// Hand-worked rows: the largest magnitude maps to +-127, ties round away from zero, a row of
// zeros has scale 0.
TEST(OpsQuantizeRows, MatchesHandWorkedRows) {
  Tensor x = Tensor::empty({3, 4});
  const float rows[3][4] = {{2.54f, -1.27f, 0.01f, 0.03f},  // scale 0.02: 127, -63.5, 0.5, 1.5
                            {0, 0, 0, 0},
                            {-3.0f, 1.0f, 0.0f, 2.9999f}};
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j) x.f32()[r * 4 + j] = rows[r][j];
  const Quantized got = quantize(x);
  EXPECT_FLOAT_EQ(got.scales.f32()[0], 2.54f / 127);
  EXPECT_EQ(got.scales.f32()[1], 0.0f);
  EXPECT_FLOAT_EQ(got.scales.f32()[2], 3.0f / 127);
  const int want[3][4] = {{127, -64, 1, 2}, {0, 0, 0, 0}, {-127, 42, 0, 127}};
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(got.q.i8()[r * 4 + j], want[r][j]) << "row " << r << " column " << j;
}

// At a real activation's size (parallel over rows): every integer is within half a step of x /
// scale (plus fp32 rounding), the largest of each row is +-127, and threads change nothing.
TEST(OpsQuantizeRows, EveryElementWithinHalfAStepAtAnyThreadCount) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(11);
  const Tensor x = random_tensor({700, 512}, rng, -4.0f, 4.0f);
  set_threads(1);
  const Quantized one = quantize(x);
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float s = one.scales.f32()[r];
    int largest = 0;
    for (int64_t j = 0; j < x.cols(); ++j) {
      const int q = one.q.i8()[r * x.cols() + j];
      largest = std::max(largest, std::abs(q));
      ASSERT_LE(std::fabs(x.f32()[r * x.cols() + j] / s - q), 0.5 + 1e-4) << r << "," << j;
    }
    ASSERT_EQ(largest, 127) << "row " << r;
  }
  for (int threads : {2, 3}) {
    set_threads(threads);
    const Quantized again = quantize(x);
    for (int64_t i = 0; i < x.numel(); ++i)
      ASSERT_EQ(again.q.i8()[i], one.q.i8()[i]) << "threads " << threads << " at " << i;
  }
}

// y = x W^T + b in double from the integers ops::quantize_rows gives (the product quantizes x
// the same way), with the magnitude of the scaled sum that fp32 rounding scales with.
struct Reference {
  std::vector<double> y, scaled_abs;
};

Reference reference(const Quantized& x, const ops::Int8Matrix& w, const Tensor& bias) {
  const int64_t rows = x.q.rows(), k = x.q.cols(), n = w.rows();
  Reference r{std::vector<double>(rows * n), std::vector<double>(rows * n)};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t t = 0; t < k; ++t)
        sum += int64_t{x.q.i8()[i * k + t]} * int64_t{w.q.i8()[j * k + t]};
      const double scaled = static_cast<double>(x.scales.f32()[i]) * w.scales.f32()[j] * sum;
      r.y[i * n + j] = scaled + (bias.defined() ? bias.f32()[j] : 0.0);
      r.scaled_abs[i * n + j] = std::fabs(scaled);
    }
  return r;
}

TEST(OpsGemmInt8, MatchesADoubleProductOfTheSameIntegers) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(13);
  struct Size {
    int64_t rows, n, k;
    bool bias;
  };
  // Rows across the buckets (16s, 64s, 256s, with padding and without); n and k of a base
  // model's attention, feed-forward and output projections.
  const Size sizes[] = {{1, 512, 512, true},     {7, 2048, 512, true},  {16, 512, 2048, true},
                        {100, 8000, 512, false}, {300, 512, 512, true}, {1030, 96, 136, true},
                        {2500, 64, 512, true}};
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    for (const Size& s : sizes) {
      const Tensor x = random_tensor({s.rows, s.k}, rng, -3.0f, 3.0f);
      // Half the products read a matrix whose plain integers were released.
      const Tensor wf = random_tensor({s.n, s.k}, rng, -0.2f, 0.2f);
      const ops::Int8Matrix w = packed(wf, s.rows % 2 == 0);
      const Tensor bias = s.bias ? random_tensor({s.n}, rng) : Tensor();
      Tensor y = Tensor::empty({s.rows, s.n});
      ops::gemm_int8(x, w, bias, y);
      testing::expect_native_kernel("int8 gemm",
                                    fmt::format("{}x{}x{}, {} threads", s.rows, s.n, s.k, threads),
                                    ops::int8_gemm_kernel(s.rows, s.n, s.k),
                                    testing::cpu_has_int8_dot_products(), "int8_sums");
      const Reference want = reference(quantize(x), ops::quantize_matrix(wf), bias);
      // The s32 sum is exact; its conversion to fp32, the product of the two scales, their
      // product with the sum and the bias's addition each round once.
      int bad = 0;
      for (int64_t i = 0; i < y.numel() && bad < 5; ++i) {
        const double tol = 4 * kU32 * want.scaled_abs[i] + kU32 * std::fabs(want.y[i]) + 1e-30;
        if (std::fabs(y.f32()[i] - want.y[i]) > tol) {
          ADD_FAILURE() << "threads " << threads << ", " << s.rows << "x" << s.n << "x" << s.k
                        << " element " << i << ": " << y.f32()[i] << " vs " << want.y[i]
                        << " (bound " << tol << ")";
          ++bad;
        }
      }
    }
  }
}

// From the unquantized numbers: x = xs xq + ex with |ex| <= xs / 2 per element, and likewise W,
// so |y - x W^T| <= sum_t (|x_t| ws / 2 + xs / 2 |w_t| + xs ws / 4), plus the fp32 GEMM's own
// rounding. And the int8 product is further from the exact one than fp32 rounding alone would
// put it: int8 really ran.
TEST(OpsGemmInt8, AgreesWithTheFp32GemmWithinTheScalesBound) {
  testing::ThreadCountGuard guard;
  set_threads(2);
  SplitMix64 rng(17);
  const int64_t rows = 200, n = 384, k = 512;
  const Tensor x = random_tensor({rows, k}, rng, -2.0f, 2.0f);
  const Tensor wf = random_tensor({n, k}, rng, -0.1f, 0.1f);
  const ops::Int8Matrix w = packed(wf);
  const Quantized xq = quantize(x);
  Tensor y8 = Tensor::empty({rows, n}), y32 = Tensor::zeros({rows, n});
  ops::gemm_int8(x, w, Tensor(), y8);
  ops::gemm(x, false, wf, true, y32);
  double worst_share = 0, largest_fp32_error = 0, largest_difference = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double xs = xq.scales.f32()[i], ws = w.scales.f32()[j];
      double exact = 0, abs = 0, bound = 0;
      for (int64_t t = 0; t < k; ++t) {
        const double a = x.f32()[i * k + t], b = wf.f32()[j * k + t];
        exact += a * b;
        abs += std::fabs(a * b);
        bound += std::fabs(a) * ws / 2 + xs / 2 * std::fabs(b) + xs * ws / 4;
      }
      const double got = y8.f32()[i * n + j];
      bound += 6 * kU32 * (abs + bound);
      worst_share = std::max(worst_share, std::fabs(got - exact) / bound);
      largest_fp32_error = std::max(largest_fp32_error, std::fabs(y32.f32()[i * n + j] - exact));
      largest_difference = std::max(largest_difference, std::fabs(got - y32.f32()[i * n + j]));
    }
  EXPECT_LE(worst_share, 1.0);
  EXPECT_GT(largest_difference, 100 * largest_fp32_error) << "the int8 product looks like fp32";
}

TEST(OpsGemmInt8, MismatchedOrUnpackedOperandsAreRefused) {
  SplitMix64 rng(19);
  const ops::Int8Matrix w = packed(random_tensor({8, 6}, rng));
  const Tensor x = Tensor::zeros({4, 6});
  EXPECT_THROW(ops::gemm_int8(Tensor::zeros({4, 5}), w, Tensor(), Tensor::empty({4, 8})), Error);
  EXPECT_THROW(ops::gemm_int8(x, w, Tensor(), Tensor::empty({4, 7})), Error);
  EXPECT_THROW(ops::gemm_int8(x, w, Tensor::zeros({7}), Tensor::empty({4, 8})), Error);
  ops::Int8Matrix unpacked{w.q, w.scales, nullptr};
  EXPECT_THROW(ops::gemm_int8(x, unpacked, Tensor(), Tensor::empty({4, 8})), Error);
  ops::Int8Matrix wrong{Tensor::zeros({8, 6}), w.scales, nullptr};  // F32 where I8 belongs
  EXPECT_THROW(ops::pack_int8(wrong), Error);
  ops::Int8Matrix short_scales{w.q, Tensor::zeros({7}), nullptr};
  EXPECT_THROW(ops::pack_int8(short_scales), Error);
}

}  // namespace
}  // namespace transduce
