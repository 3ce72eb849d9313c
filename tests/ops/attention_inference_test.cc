// The fused inference attention against the unfused training path (scaled scores by BLAS,
// masked_softmax, probabilities times values by BLAS) on the same projections.
#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"
#include "model/attention.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

struct Case {
  int64_t batch, lq, capacity, lk;
  bool pad, causal;
  int64_t causal_offset;
  int64_t window = 0;  // restricted self-attention
};

class FusedAttention : public ::testing::TestWithParam<Case> {};

TEST_P(FusedAttention, EqualsTheUnfusedPath) {
  const Case c = GetParam();
  ModelConfig config;
  config.d_model = 12;
  config.heads = 3;
  config.d_k = 5;
  config.d_v = 7;
  MultiHeadAttention attn("attn", config);
  ParamList params;
  attn.collect(params);
  SplitMix64 rng(11);
  for (Param* p : params) p->value.copy_from(random_tensor(p->value.shape(), rng));

  const Tensor xq = random_tensor({c.batch, c.lq, config.d_model}, rng);
  const Tensor keys = random_tensor({c.batch, c.capacity, config.heads * config.d_k}, rng);
  const Tensor values = random_tensor({c.batch, c.capacity, config.heads * config.d_v}, rng);
  Tensor pad;
  if (c.pad) {
    pad = Tensor::zeros({c.batch, c.lk}, DType::U8);
    for (int64_t j = c.lk - 2; j < c.lk; ++j) pad.u8()[j] = 1;  // sentence 0: last two
    for (int64_t j = 0; j < c.lk; ++j) pad.u8()[c.lk + j] = 1;  // sentence 1: every key
    pad.u8()[(c.batch - 1) * c.lk] = 1;                         // last: the first key
  }

  Arena a1, a2;
  Context unfused(a1), fused(a2);
  fused.inference = true;
  const Tensor want =
      attn.attend(unfused, xq, keys, values, c.lk, pad, c.causal, c.causal_offset, c.window);
  const Tensor got =
      attn.attend(fused, xq, keys, values, c.lk, pad, c.causal, c.causal_offset, c.window);
  ASSERT_EQ(got.shape(), want.shape());
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    worst = std::max(worst, double{std::abs(got.f32()[i] - want.f32()[i])});
    largest = std::max(largest, double{std::abs(want.f32()[i])});
  }
  EXPECT_LE(worst, 1e-5 * largest);
  EXPECT_GT(largest, 0.1);
}

INSTANTIATE_TEST_SUITE_P(
    Masks, FusedAttention,
    ::testing::Values(Case{3, 4, 6, 6, false, false, 0},    // encoder-like
                      Case{3, 4, 6, 6, true, false, 0},     // source padding, a fully hidden row
                      Case{2, 5, 5, 5, false, true, 0},     // causal self-attention
                      Case{3, 2, 9, 6, true, true, 3},      // a cache longer than its use
                      Case{4, 1, 8, 7, false, false, 0},    // one query per row (greedy step)
                      Case{40, 3, 30, 30, true, false, 0},  // large enough to run threaded
                      Case{3, 6, 6, 6, true, false, 0, 1},  // encoder, window 1
                      Case{2, 5, 5, 5, false, true, 0, 2},  // causal, window 2
                      Case{3, 2, 9, 6, true, true, 3, 1},   // cached, window 1
                      Case{40, 30, 30, 30, true, false, 0, 4},  // threaded, window 4
                      // Long enough for training's banded scores (blocks of 64 queries).
                      Case{2, 200, 200, 200, true, false, 0, 5},
                      Case{2, 150, 150, 150, false, true, 0, 7}));

}  // namespace
}  // namespace transduce
