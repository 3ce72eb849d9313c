// gemm and gemm_grid against naive double-precision loops written here.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

// Element (i, j) of op(t), with t read as a [rows, cols] matrix.
double op_at(const Tensor& t, bool trans, int64_t i, int64_t j) {
  const int64_t cols = t.cols();
  return trans ? t.f32()[j * cols + i] : t.f32()[i * cols + j];
}

// alpha * op(a) op(b) + beta * c0, row-major m x n.
std::vector<double> naive_gemm(const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor& c0,
                               double alpha, double beta) {
  const int64_t m = ta ? a.cols() : a.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += op_at(a, ta, i, p) * op_at(b, tb, p, j);
      out[static_cast<size_t>(i * n + j)] = alpha * s + beta * c0.f32()[i * n + j];
    }
  return out;
}

void expect_matches(const Tensor& c, const std::vector<double>& want, double tol,
                    const char* what) {
  ASSERT_EQ(static_cast<size_t>(c.numel()), want.size()) << what;
  for (int64_t i = 0; i < c.numel(); ++i)
    EXPECT_NEAR(c.f32()[i], want[static_cast<size_t>(i)], tol) << what << " element " << i;
}

TEST(OpsGemm, AllFourTransposeCombinationsMatchNaiveLoop) {
  SplitMix64 rng(11);
  const int64_t m = 5, n = 7, k = 3;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = random_tensor(ta ? Shape{k, m} : Shape{m, k}, rng);
      Tensor b = random_tensor(tb ? Shape{n, k} : Shape{k, n}, rng);
      Tensor c = random_tensor({m, n}, rng, 5.0f, 9.0f);  // beta = 0: old c must not leak in
      const Tensor c0 = c.clone();
      ops::gemm(a, ta, b, tb, c, 0.75f);
      const std::string what = std::string("ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0");
      expect_matches(c, naive_gemm(a, ta, b, tb, c0, 0.75, 0.0), 1e-5, what.c_str());
    }
}

TEST(OpsGemm, AlphaAndBetaCombineWithTheOldC) {
  SplitMix64 rng(12);
  const int64_t m = 4, n = 6, k = 9;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = random_tensor(ta ? Shape{k, m} : Shape{m, k}, rng);
      Tensor b = random_tensor(tb ? Shape{n, k} : Shape{k, n}, rng);
      Tensor c = random_tensor({m, n}, rng);
      const Tensor c0 = c.clone();
      ops::gemm(a, ta, b, tb, c, -0.5f, 2.0f);
      expect_matches(c, naive_gemm(a, ta, b, tb, c0, -0.5, 2.0), 1e-5, "alpha -0.5 beta 2");
    }
}

TEST(OpsGemm, BetaOneAccumulatesAcrossCalls) {
  SplitMix64 rng(13);
  Tensor a = random_tensor({3, 8}, rng);
  Tensor b = random_tensor({8, 2}, rng);
  Tensor c = Tensor::zeros({3, 2});
  const Tensor zero = c.clone();
  ops::gemm(a, false, b, false, c, 1.0f, 1.0f);
  ops::gemm(a, false, b, false, c, 1.0f, 1.0f);
  expect_matches(c, naive_gemm(a, false, b, false, zero, 2.0, 0.0), 1e-5, "twice with beta 1");
}

TEST(OpsGemm, ThreeDimensionalTensorIsReadAsMatrix) {
  SplitMix64 rng(14);
  // x [2, 3, 4] is the matrix [6, 4]: x W with W [4, 5] -> [2, 3, 5].
  Tensor x = random_tensor({2, 3, 4}, rng);
  Tensor w = random_tensor({4, 5}, rng);
  Tensor y = Tensor::empty({2, 3, 5});
  ops::gemm(x, false, w, false, y);
  const Tensor x2 = x.reshape({6, 4});
  expect_matches(y, naive_gemm(x2, false, w, false, Tensor::zeros({6, 5}), 1.0, 0.0), 1e-5, "x W");
  // The weight gradient x^T dy: [2, 3, 4]^T [2, 3, 5] -> [4, 5], accumulated into dW.
  Tensor dy = random_tensor({2, 3, 5}, rng);
  Tensor dw = random_tensor({4, 5}, rng);
  const Tensor dw0 = dw.clone();
  ops::gemm(x, true, dy, false, dw, 1.0f, 1.0f);
  expect_matches(dw, naive_gemm(x2, true, dy.reshape({6, 5}), false, dw0, 1.0, 1.0), 1e-5,
                 "x^T dy");
}

TEST(OpsGemm, BetaZeroIgnoresWhateverCHeld) {
  // Outputs often come uninitialised from an arena; with beta = 0 even NaN there must vanish.
  SplitMix64 rng(15);
  Tensor a = random_tensor({3, 4}, rng), b = random_tensor({4, 2}, rng);
  Tensor c = Tensor::empty({3, 2});
  for (int64_t i = 0; i < c.numel(); ++i) c.f32()[i] = std::nanf("");
  ops::gemm(a, false, b, false, c);
  expect_matches(c, naive_gemm(a, false, b, false, Tensor::zeros({3, 2}), 1.0, 0.0), 1e-5,
                 "over NaN");
}

TEST(OpsGemm, EmptyInnerDimensionGivesBetaTimesC) {
  // The weight gradient x^T dy of an empty batch: k = 0, so C = beta * C (zeros for beta = 0).
  Tensor a = Tensor::zeros({0, 3}), b = Tensor::zeros({0, 2});
  Tensor c = Tensor::empty({3, 2});
  for (int64_t i = 0; i < c.numel(); ++i) c.f32()[i] = 4.0f;
  ops::gemm(a, true, b, false, c, 1.0f, 0.5f);
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.f32()[i], 2.0f) << i;
  ops::gemm(a, true, b, false, c);
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.f32()[i], 0.0f) << i;
  // The same with a last dimension of 0: A [3, 0] times B [0, 2].
  for (int64_t i = 0; i < c.numel(); ++i) c.f32()[i] = 4.0f;
  ops::gemm(Tensor::zeros({3, 0}), false, Tensor::zeros({0, 2}), false, c, 1.0f, 0.25f);
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.f32()[i], 1.0f) << i;
}

TEST(OpsGemm, MismatchedInnerDimensionThrows) {
  Tensor a = Tensor::zeros({3, 4}), b = Tensor::zeros({5, 2}), c = Tensor::zeros({3, 2});
  EXPECT_THROW(ops::gemm(a, false, b, false, c), Error);
  Tensor c_bad = Tensor::zeros({3, 3});
  EXPECT_THROW(ops::gemm(a, false, Tensor::zeros({4, 2}), false, c_bad), Error);
}

// The attention layout: activations [B, L, H * dh], head h of sentence b is the [L, dh] matrix
// at offset b * L * H * dh + h * dh with rows H * dh apart.
struct Dims {
  int64_t batch = 2, heads = 3, lq = 4, lk = 5, dh = 6;
};

TEST(OpsGemmGrid, ScoresQKTransposedMatchNaiveLoops) {
  const Dims d;
  const int64_t hd = d.heads * d.dh;
  SplitMix64 rng(21);
  Tensor q = random_tensor({d.batch, d.lq, hd}, rng);
  Tensor k = random_tensor({d.batch, d.lk, hd}, rng);
  Tensor s = random_tensor({d.batch, d.heads, d.lq, d.lk}, rng, 3.0f, 4.0f);  // overwritten
  const float alpha = 0.25f;
  ops::gemm_grid(false, true, d.lq, d.lk, d.dh, alpha, {q, 0, hd, d.lq * hd, d.dh},
                 {k, 0, hd, d.lk * hd, d.dh}, 0.0f,
                 {s, 0, d.lk, d.heads * d.lq * d.lk, d.lq * d.lk}, d.batch, d.heads);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.lq; ++i)
        for (int64_t j = 0; j < d.lk; ++j) {
          double want = 0;
          for (int64_t p = 0; p < d.dh; ++p)
            want += double{q.f32()[(b * d.lq + i) * hd + h * d.dh + p]} *
                    k.f32()[(b * d.lk + j) * hd + h * d.dh + p];
          want *= alpha;
          EXPECT_NEAR(s.f32()[((b * d.heads + h) * d.lq + i) * d.lk + j], want, 1e-5)
              << "b " << b << " h " << h << " i " << i << " j " << j;
        }
}

TEST(OpsGemmGrid, ProbsTransposedTimesGradAccumulatesWithBetaOne) {
  // dV[b, :, h] += P[b, h]^T dO[b, :, h]: op(A) = P^T is lk x lq, B = dO head is lq x dh.
  const Dims d;
  const int64_t hd = d.heads * d.dh;
  SplitMix64 rng(22);
  Tensor p = random_tensor({d.batch, d.heads, d.lq, d.lk}, rng, 0.0f, 1.0f);
  Tensor dout = random_tensor({d.batch, d.lq, hd}, rng);
  Tensor dv = random_tensor({d.batch, d.lk, hd}, rng);
  const Tensor dv0 = dv.clone();
  ops::gemm_grid(true, false, d.lk, d.dh, d.lq, 1.0f,
                 {p, 0, d.lk, d.heads * d.lq * d.lk, d.lq * d.lk}, {dout, 0, hd, d.lq * hd, d.dh},
                 1.0f, {dv, 0, hd, d.lk * hd, d.dh}, d.batch, d.heads);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t j = 0; j < d.lk; ++j)
        for (int64_t e = 0; e < d.dh; ++e) {
          double want = dv0.f32()[(b * d.lk + j) * hd + h * d.dh + e];
          for (int64_t i = 0; i < d.lq; ++i)
            want += double{p.f32()[((b * d.heads + h) * d.lq + i) * d.lk + j]} *
                    dout.f32()[(b * d.lq + i) * hd + h * d.dh + e];
          EXPECT_NEAR(dv.f32()[(b * d.lk + j) * hd + h * d.dh + e], want, 1e-5)
              << "b " << b << " h " << h << " j " << j << " e " << e;
        }
}

TEST(OpsGemmGrid, OffsetReachesTheSecondHalfOfAPackedTensor) {
  // K and V packed as [B, lk, 2 * H * dh]; V starts at element H * dh. ctx = P V per head.
  const Dims d;
  const int64_t hd = d.heads * d.dh;
  SplitMix64 rng(23);
  Tensor p = random_tensor({d.batch, d.heads, d.lq, d.lk}, rng, 0.0f, 1.0f);
  Tensor kv = random_tensor({d.batch, d.lk, 2 * hd}, rng);
  Tensor ctx = random_tensor({d.batch, d.lq, hd}, rng);
  ops::gemm_grid(
      false, false, d.lq, d.dh, d.lk, 1.0f, {p, 0, d.lk, d.heads * d.lq * d.lk, d.lq * d.lk},
      {kv, hd, 2 * hd, d.lk * 2 * hd, d.dh}, 0.0f, {ctx, 0, hd, d.lq * hd, d.dh}, d.batch, d.heads);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.lq; ++i)
        for (int64_t e = 0; e < d.dh; ++e) {
          double want = 0;
          for (int64_t j = 0; j < d.lk; ++j)
            want += double{p.f32()[((b * d.heads + h) * d.lq + i) * d.lk + j]} *
                    kv.f32()[(b * d.lk + j) * 2 * hd + hd + h * d.dh + e];
          EXPECT_NEAR(ctx.f32()[(b * d.lq + i) * hd + h * d.dh + e], want, 1e-5)
              << "b " << b << " h " << h << " i " << i << " e " << e;
        }
}

}  // namespace
}  // namespace transduce
