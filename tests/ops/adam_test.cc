// adam_update against a scalar Adam with bias correction written here in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using transduce::testing::fill_uniform;

struct ScalarAdam {
  double p, m = 0, v = 0;
  void step(double g, double lr, double b1, double b2, double eps, int t) {
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double mhat = m / (1 - std::pow(b1, t));
    const double vhat = v / (1 - std::pow(b2, t));
    p -= lr * mhat / (std::sqrt(vhat) + eps);
  }
};

constexpr float kB1 = 0.9f, kB2 = 0.98f, kEps = 1e-9f, kLr = 0.01f;

TEST(OpsAdam, TwoStepsMatchScalarAdamWithBiasCorrection) {
  const int64_t n = 1000;
  SplitMix64 rng(81);
  Tensor param = Tensor::empty({n}), g1 = Tensor::empty({n}), g2 = Tensor::empty({n});
  fill_uniform(param, rng, -3.0f, 3.0f);
  fill_uniform(g1, rng, -2.0f, 2.0f);
  fill_uniform(g2, rng, -2.0f, 2.0f);
  // A few hand-picked gradients: tiny, zero, sign flips between the steps.
  const float first[6] = {0.1f, -2.0f, 1e-3f, -1e-4f, 0.0f, 5.0f};
  const float second[6] = {-0.3f, -1.0f, 2e-3f, 1e-4f, 0.5f, 5.0f};
  for (int i = 0; i < 6; ++i) {
    g1.f32()[i] = first[i];
    g2.f32()[i] = second[i];
  }
  Tensor m = Tensor::zeros({n}), v = Tensor::zeros({n});
  std::vector<ScalarAdam> ref;
  for (int64_t i = 0; i < n; ++i) ref.push_back({double{param.f32()[i]}});
  const Tensor p0 = param.clone();

  ops::adam_update(param, g1, m, v, kLr, kB1, kB2, kEps, 1);
  for (int64_t i = 0; i < n; ++i) {
    ref[size_t(i)].step(g1.f32()[i], kLr, kB1, kB2, kEps, 1);
    EXPECT_NEAR(param.f32()[i], ref[size_t(i)].p, 1e-6) << "step 1, element " << i;
    EXPECT_NEAR(m.f32()[i], ref[size_t(i)].m, 1e-6) << "step 1, m " << i;
    EXPECT_NEAR(v.f32()[i], ref[size_t(i)].v, 1e-6) << "step 1, v " << i;
    // First step: mhat = g and vhat = g^2, so the update is lr * sign(g).
    const double g = g1.f32()[i];
    const double want_step = g > 0 ? -kLr : g < 0 ? kLr : 0.0;
    EXPECT_NEAR(param.f32()[i] - p0.f32()[i], want_step, 2e-6) << "step 1, element " << i;
  }

  ops::adam_update(param, g2, m, v, kLr, kB1, kB2, kEps, 2);
  for (int64_t i = 0; i < n; ++i) {
    ref[size_t(i)].step(g2.f32()[i], kLr, kB1, kB2, kEps, 2);
    EXPECT_NEAR(param.f32()[i], ref[size_t(i)].p, 1e-6) << "step 2, element " << i;
    EXPECT_NEAR(m.f32()[i], ref[size_t(i)].m, 1e-6) << "step 2, m " << i;
    EXPECT_NEAR(v.f32()[i], ref[size_t(i)].v, 1e-6) << "step 2, v " << i;
  }
}

TEST(OpsAdam, HandComputedSecondStep) {
  // One parameter, g = 1 then g = -1, p0 = 0.
  // Step 1: m = 0.1, v = 0.02, mhat = 1, vhat = 1, p = -lr.
  // Step 2: m = 0.09 - 0.1 = -0.01, v = 0.0196 + 0.02 = 0.0396,
  //         mhat = -0.01 / 0.19, vhat = 0.0396 / (1 - 0.9604) = 1, p = -lr + lr * 0.01 / 0.19.
  Tensor p = Tensor::zeros({1}), g = Tensor::empty({1}), m = Tensor::zeros({1}),
         v = Tensor::zeros({1});
  g.f32()[0] = 1.0f;
  ops::adam_update(p, g, m, v, kLr, kB1, kB2, kEps, 1);
  // Tolerances cover float beta1 = 0.9f, beta2 = 0.98f, which are not exactly 0.9 and 0.98.
  EXPECT_NEAR(p.f32()[0], -0.01, 1e-8);
  EXPECT_NEAR(m.f32()[0], 0.1, 1e-7);
  EXPECT_NEAR(v.f32()[0], 0.02, 1e-7);
  g.f32()[0] = -1.0f;
  ops::adam_update(p, g, m, v, kLr, kB1, kB2, kEps, 2);
  EXPECT_NEAR(m.f32()[0], -0.01, 1e-7);
  EXPECT_NEAR(v.f32()[0], 0.0396, 1e-7);
  EXPECT_NEAR(p.f32()[0], -0.01 + 0.01 * 0.01 / 0.19, 1e-7);  // -0.0094737
}

// With a bf16 copy to refresh (bf16 training), the update is the same to the bit and the copy is
// the updated parameter rounded to bf16; at a size that takes the parallel path.
TEST(OpsAdam, RefreshesTheBf16CopyInTheSamePass) {
  SplitMix64 rng(4);
  const int64_t n = 100003;
  const Tensor p0 = testing::random_tensor({n}, rng), g = testing::random_tensor({n}, rng);
  Tensor p = p0.clone(), m = Tensor::zeros({n}), v = Tensor::zeros({n});
  Tensor q = p0.clone(), mq = Tensor::zeros({n}), vq = Tensor::zeros({n});
  Tensor copy = Tensor::zeros({n}, DType::BF16);
  for (int64_t t = 1; t <= 2; ++t) {
    ops::adam_update(p, g, m, v, kLr, kB1, kB2, kEps, t);
    ops::adam_update(q, g, mq, vq, kLr, kB1, kB2, kEps, t, copy);
    ASSERT_EQ(0, std::memcmp(p.raw(), q.raw(), p.nbytes())) << "step " << t;
    ASSERT_EQ(0, std::memcmp(v.raw(), vq.raw(), v.nbytes())) << "step " << t;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(copy.bf16()[i], float_to_bf16(q.f32()[i])) << "step " << t << " at " << i;
  }
  EXPECT_THROW(
      ops::adam_update(q, g, mq, vq, kLr, kB1, kB2, kEps, 3, Tensor::zeros({n - 1}, DType::BF16)),
      Error);
}

TEST(OpsAdam, MismatchedSizesThrow) {
  Tensor p = Tensor::zeros({4}), g = Tensor::zeros({3}), m = Tensor::zeros({4}),
         v = Tensor::zeros({4});
  EXPECT_THROW(ops::adam_update(p, g, m, v, kLr, kB1, kB2, kEps, 1), Error);
}

}  // namespace
}  // namespace transduce
