// ops::pack_weights and ops::linear_packed, a translating layer's product with weights packed
// once: against a double product of the same (for bf16: bf16-rounded) inputs, at a base model's
// sizes (one row to an encoder batch's, the vocabulary's projection) on 1, 2 and 3 threads, with
// and without the bias, the ReLU and a bf16 output; and the shapes and types it refuses.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "support/bf16_tensor.h"
#include "support/cpu_features.h"
#include "support/exact_product.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using testing::bf16_of;
using testing::exact_product;
using testing::expect_close_to_exact;
using testing::random_tensor;

struct Size {
  int64_t rows, n, k;
  bool bias;
};

TEST(OpsLinearPacked, MatchesADoubleProductAtABaseModelsSizes) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(31);
  // A greedy step's row, a beam's, small batches' decoder steps and an encoder batch's rows (odd
  // counts take the kernels' edges); n and k of a base model's attention, feed-forward and
  // output projections (that one has no bias).
  const Size sizes[] = {{1, 512, 512, true},    {4, 2048, 512, true},  {37, 512, 2048, true},
                        {16, 8000, 512, false}, {400, 512, 512, true}, {1030, 96, 136, true}};
  for (const Size& s : sizes) {
    const Tensor x = random_tensor({s.rows, s.k}, rng),
                 w = random_tensor({s.n, s.k}, rng, -0.1f, 0.1f);
    const Tensor bias = s.bias ? random_tensor({s.n}, rng, -0.5f, 0.5f) : Tensor();
    const Tensor x16 = bf16_of(x), w16 = bf16_of(w);
    const auto fp32 = exact_product(x, w, bias), bf16 = exact_product(x16, w16, bias);
    const ops::PackedWeights p32 = ops::pack_weights(w), p16 = ops::pack_weights(w16);
    ASSERT_TRUE(p32.defined());
    // bf16 weights are packed where oneDNN multiplies bf16 (elsewhere linear_product widens).
    ASSERT_EQ(p16.defined(), ops::bf16_support().available);
    for (int threads : {1, 2, 3}) {
      set_threads(threads);
      const std::string at = fmt::format(" {}x{}x{} at {} threads", s.rows, s.n, s.k, threads);
      testing::expect_native_kernel("packed fp32 gemm", at, ops::packed_gemm_kernel(s.rows, p32),
                                    true, "ref:");
      for (bool relu : {false, true}) {
        const std::string name = (relu ? " with ReLU" : "") + at;
        Tensor y = Tensor::empty({s.rows, s.n});
        ops::linear_packed(x, p32, bias, relu, y);
        expect_close_to_exact(y, fp32, s.k, relu, "fp32" + name);
        if (!p16.defined()) continue;
        ops::linear_packed(x16, p16, bias, relu, y);
        expect_close_to_exact(y, bf16, s.k, relu, "bf16 to fp32" + name);
        Tensor y16 = Tensor::empty({s.rows, s.n}, DType::BF16);
        ops::linear_packed(x16, p16, bias, relu, y16);
        expect_close_to_exact(y16, bf16, s.k, relu, "bf16 to bf16" + name);
      }
    }
  }
}

// A 3-d input is its rows; no rows is nothing to do.
TEST(OpsLinearPacked, ReadsBatchesOfSequencesAsRows) {
  SplitMix64 rng(32);
  const Tensor x = random_tensor({3, 7, 33}, rng), w = random_tensor({17, 33}, rng);
  const Tensor bias = random_tensor({17}, rng);
  Tensor y = Tensor::empty({3, 7, 17});
  ops::linear_packed(x, ops::pack_weights(w), bias, true, y);
  expect_close_to_exact(y, exact_product(x, w, bias), 33, true, "3-d");
  ops::linear_packed(Tensor::empty({0, 33}), ops::pack_weights(w), bias, false,
                     Tensor::empty({0, 17}));
}

TEST(OpsLinearPacked, RefusesMismatchedShapesAndTypes) {
  const Tensor x = Tensor::zeros({4, 3}), b = Tensor::zeros({5});
  const ops::PackedWeights w = ops::pack_weights(Tensor::zeros({5, 3}));
  EXPECT_THROW(ops::linear_packed(x, ops::PackedWeights(), b, false, Tensor::zeros({4, 5})), Error);
  EXPECT_THROW(ops::linear_packed(Tensor::zeros({4, 2}), w, b, false, Tensor::zeros({4, 5})),
               Error);
  EXPECT_THROW(ops::linear_packed(x, w, Tensor::zeros({4}), false, Tensor::zeros({4, 5})), Error);
  EXPECT_THROW(ops::linear_packed(x, w, b, false, Tensor::zeros({3, 5})), Error);
  EXPECT_THROW(ops::linear_packed(x, w, b, false, Tensor::zeros({4, 5}, DType::BF16)), Error);
  EXPECT_THROW(ops::linear_packed(bf16_of(x), w, b, false, Tensor::zeros({4, 5})), Error);
  EXPECT_THROW(ops::pack_weights(Tensor::zeros({5, 3}, DType::I32)), Error);
}

}  // namespace
}  // namespace transduce
