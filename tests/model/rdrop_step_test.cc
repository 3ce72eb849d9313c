// R-Drop's step (Transformer::train_step with a consistency weight, on a batch repeated twice)
// without dropout, against plain cross-entropy: the repeated batch at half the gradient's scale
// has the batch's own gradient, up to the order of fp32 sums, whatever the weight. (The two copies
// of a row are computed alike, up to the kernels' summation order for rows at other positions, so
// the consistency term's gradient p (d - E_p[d]) + p - q, with p = q and d = 0 in exact
// arithmetic, is rounding-sized.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <vector>

#include "core/rng.h"
#include "model/transformer.h"
#include "support/random_batch.h"
#include "support/random_model.h"

namespace transduce {
namespace {

struct Step {
  ops::CrossEntropySums sums;
  std::vector<float> gradient;  // every parameter's, in order
};

Step step(Transformer& model, const Batch& batch, float grad_scale, float consistency) {
  Arena arena;
  Context ctx(arena, /*train=*/true, 1);
  model.zero_grad();
  Step s{model.train_step(ctx, batch, grad_scale, consistency), {}};
  for (const Param* p : model.parameters())
    s.gradient.insert(s.gradient.end(), p->grad.f32(), p->grad.f32() + p->grad.numel());
  return s;
}

double distance(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
  return std::sqrt(sum);
}

// The batch's rows in reverse order: the same sums over its tokens, added in another order.
Batch reversed_rows(const Batch& batch) {
  auto reverse = [](const Tensor& t) {
    Tensor out = Tensor::empty(t.shape(), t.dtype());
    const int64_t rows = t.dim(0), cols = t.dim(1);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(out.i32() + r * cols, t.i32() + (rows - 1 - r) * cols,
                  static_cast<size_t>(cols) * sizeof(int32_t));
    return out;
  };
  return Batch{reverse(batch.src), reverse(batch.tgt_in), reverse(batch.tgt_out)};
}

class RDropStep : public ::testing::Test {
 protected:
  RDropStep() : model_(testing::precision_test_config()) {
    testing::init_untrained(model_, 7);
    SplitMix64 rng(11);
    batch_ = testing::random_padded_batch(rng, 16, 24, model_.config().vocab_size);
    for (int64_t i = 0; i < batch_.tgt_out.numel(); ++i) tokens_ += batch_.tgt_out.i32()[i] != 0;
  }
  Transformer model_;
  Batch batch_;
  int64_t tokens_ = 0;
};

// The repeated batch sums 2T token terms, each half of the batch's own, where the batch sums T:
// the two gradients differ by the order of fp32 sums alone, which over the same terms is bounded
// by (k + 2) u32 sum |terms|, k = 2T or T, whatever the order. The batch with its rows reversed
// sums the same terms in another order too (k = T both times), so its distance from the batch's
// gradient, measured here on this CPU's kernels, is the same kind of difference with at most 1.5
// times smaller a bound. Over the model's hundreds of thousands of gradients these distances are
// sums of very many small errors and do not stray far from their typical size: the repeated batch
// must come within 10 times the reversal's distance (here: about 0.7 times). A gradient of another
// scale or direction (a copy left out, the scale not halved) is millions of times further.
TEST_F(RDropStep, TheRepeatedBatchAtHalfScaleHasTheBatchsGradient) {
  const float scale = 1.0f / static_cast<float>(tokens_);
  const Step plain = step(model_, batch_, scale, 0.0f);
  const Step reversed = step(model_, reversed_rows(batch_), scale, 0.0f);
  const double order = distance(plain.gradient, reversed.gradient);
  const double norm = distance(plain.gradient, std::vector<float>(plain.gradient.size()));
  ASSERT_GT(order, 0.0) << "reversing the batch reordered no sum: nothing to compare with";
  // Cross-entropy alone (weight 0) and R-Drop's loss at two weights.
  for (float weight : {0.0f, 0.25f, 4.0f}) {
    const Step rdrop = step(model_, repeated_twice(batch_), scale / 2, weight);
    EXPECT_EQ(rdrop.sums.tokens, 2 * plain.sums.tokens);
    // The same rows' losses twice, summed in double.
    EXPECT_NEAR(rdrop.sums.loss, 2 * plain.sums.loss,
                4.0 * (rdrop.sums.tokens + 2) * 0x1p-53 * rdrop.sums.loss)
        << "weight " << weight;
    const double gap = distance(plain.gradient, rdrop.gradient);
    EXPECT_LE(gap, 10 * order) << "weight " << weight
                               << ", relative to the gradient: " << gap / norm << ", against "
                               << order / norm << " for the batch in another order";
    std::cout << "weight " << weight << ": " << gap / norm << " of the gradient from the batch's, "
              << order / norm << " for the batch in another order" << std::endl;
  }
}

}  // namespace
}  // namespace transduce
