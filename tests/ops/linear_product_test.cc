// ops::linear_product, a layer's x w^T + bias (and ReLU) with the epilogue in the product: against
// a double product of the same (for bf16: bf16-rounded) inputs, at a real layer's size on 1, 2 and
// 3 threads, in fp32, bf16 with fp32 output, and bf16 with the ReLU and bf16 output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "support/bf16_tensor.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using testing::bf16_of;
using testing::random_tensor;
using testing::value_at;

constexpr double kU32 = 1.0 / (1 << 24);  // fp32's unit roundoff
constexpr double kU16 = 1.0 / (1 << 8);   // bf16's

// x w^T + bias in double, and the magnitudes the fp32 sums' rounding scales with.
struct Exact {
  std::vector<double> y, magnitude;
};
Exact exact(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  Exact e{std::vector<double>(static_cast<size_t>(m * n)),
          std::vector<double>(static_cast<size_t>(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.f32()[j], a = std::fabs(s);
      for (int64_t p = 0; p < k; ++p) {
        const double t = value_at(x, i * k + p) * value_at(w, j * k + p);
        s += t;
        a += std::fabs(t);
      }
      e.y[static_cast<size_t>(i * n + j)] = s;
      e.magnitude[static_cast<size_t>(i * n + j)] = a;
    }
  return e;
}

// Each output within the fp32 sums' bound gamma_{k+2} of the exact value (after the ReLU when
// `relu`), plus half a bf16 step of it when the output is bf16; and with the ReLU, exactly 0
// wherever the exact value is below minus that bound, never negative.
void expect_close(const Tensor& got, const Exact& want, int64_t k, bool relu,
                  const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double exact_y = relu ? std::max(want.y[i], 0.0) : want.y[i];
    const double sums = (k + 3) * kU32 * want.magnitude[i];
    const double bound =
        sums + (got.dtype() == DType::BF16 ? kU16 * (std::fabs(exact_y) + sums) : 0.0) + 1e-30;
    const double g = value_at(got, i);
    bool ok = std::fabs(g - exact_y) <= bound;
    if (relu) ok = ok && g >= 0 && (want.y[i] >= -sums || g == 0);
    if (!ok) {
      ADD_FAILURE() << what << " element " << i << ": " << g << " vs " << exact_y << " (bound "
                    << bound << ")";
      ++bad;
    }
  }
}

TEST(OpsLinearProduct, MatchesADoubleProductPlusBiasInEveryPrecision) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(11);
  const int64_t m = 300, k = 512, n = 384;  // a batch of rows through a d_model-wide layer
  const Tensor x = random_tensor({m, k}, rng), w = random_tensor({n, k}, rng, -0.1f, 0.1f);
  const Tensor bias = random_tensor({n}, rng, -0.5f, 0.5f);
  const Tensor x16 = bf16_of(x), w16 = bf16_of(w);
  const Exact fp32 = exact(x, w, bias), bf16 = exact(x16, w16, bias);
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    const std::string at = " at " + std::to_string(threads) + " threads";
    for (bool relu : {false, true}) {
      const std::string name = (relu ? " with ReLU" : "") + at;
      Tensor y = Tensor::empty({m, n});
      ops::linear_product(x, w, bias, relu, y);
      expect_close(y, fp32, k, relu, "fp32" + name);
      ops::linear_product(x16, w16, bias, relu, y);
      expect_close(y, bf16, k, relu, "bf16 to fp32" + name);
      Tensor y16 = Tensor::empty({m, n}, DType::BF16);
      ops::linear_product(x16, w16, bias, relu, y16);
      expect_close(y16, bf16, k, relu, "bf16 to bf16" + name);
    }
  }
}

// A 3-d input is its rows; odd sizes take the kernels' edges.
TEST(OpsLinearProduct, ReadsBatchesOfSequencesAsRows) {
  SplitMix64 rng(12);
  const Tensor x = random_tensor({3, 7, 33}, rng), w = random_tensor({17, 33}, rng);
  const Tensor bias = random_tensor({17}, rng);
  Tensor y = Tensor::empty({3, 7, 17});
  ops::linear_product(bf16_of(x), bf16_of(w), bias, true, y);
  expect_close(y, exact(bf16_of(x), bf16_of(w), bias), 33, true, "3-d");
}

TEST(OpsLinearProduct, RefusesMismatchedShapesAndTypes) {
  const Tensor x = Tensor::zeros({4, 3}), w = Tensor::zeros({5, 3}), b = Tensor::zeros({5});
  EXPECT_THROW(ops::linear_product(x, w, Tensor::zeros({4}), false, Tensor::zeros({4, 5})), Error);
  EXPECT_THROW(ops::linear_product(x, Tensor::zeros({5, 2}), b, false, Tensor::zeros({4, 5})),
               Error);
  EXPECT_THROW(ops::linear_product(x, w, b, false, Tensor::zeros({4, 5}, DType::BF16)), Error);
  EXPECT_THROW(ops::linear_product(bf16_of(x), w, b, false, Tensor::zeros({4, 5})), Error);
}

}  // namespace
}  // namespace transduce
