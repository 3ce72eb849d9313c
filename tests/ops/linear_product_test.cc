// ops::linear_product, a layer's x w^T + bias (and ReLU) with the epilogue in the product: against
// a double product of the same (for bf16: bf16-rounded) inputs, at a real layer's size on 1, 2 and
// 3 threads, in fp32, bf16 with fp32 output, and bf16 with the ReLU and bf16 output.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "support/bf16_tensor.h"
#include "support/exact_product.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using testing::bf16_of;
using testing::exact_product;
using testing::expect_close_to_exact;
using testing::random_tensor;

TEST(OpsLinearProduct, MatchesADoubleProductPlusBiasInEveryPrecision) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(11);
  const int64_t m = 300, k = 512, n = 384;  // a batch of rows through a d_model-wide layer
  const Tensor x = random_tensor({m, k}, rng), w = random_tensor({n, k}, rng, -0.1f, 0.1f);
  const Tensor bias = random_tensor({n}, rng, -0.5f, 0.5f);
  const Tensor x16 = bf16_of(x), w16 = bf16_of(w);
  const auto fp32 = exact_product(x, w, bias), bf16 = exact_product(x16, w16, bias);
  for (int threads : {1, 2, 3}) {
    set_threads(threads);
    const std::string at = " at " + std::to_string(threads) + " threads";
    for (bool relu : {false, true}) {
      const std::string name = (relu ? " with ReLU" : "") + at;
      Tensor y = Tensor::empty({m, n});
      ops::linear_product(x, w, bias, relu, y);
      expect_close_to_exact(y, fp32, k, relu, "fp32" + name);
      ops::linear_product(x16, w16, bias, relu, y);
      expect_close_to_exact(y, bf16, k, relu, "bf16 to fp32" + name);
      Tensor y16 = Tensor::empty({m, n}, DType::BF16);
      ops::linear_product(x16, w16, bias, relu, y16);
      expect_close_to_exact(y16, bf16, k, relu, "bf16 to bf16" + name);
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
  expect_close_to_exact(y, exact_product(bf16_of(x), bf16_of(w), bias), 33, true, "3-d");
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
