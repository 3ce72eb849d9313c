// Label-smoothed cross-entropy against its definition, computed in double in the test.
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

using transduce::testing::random_tensor;

using transduce::testing::from;

Tensor ids_of(const std::vector<int32_t>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, DType::I32);
  for (size_t i = 0; i < v.size(); ++i) t.i32()[i] = v[i];
  return t;
}

struct Naive {
  double loss = 0, nll = 0;
  int64_t tokens = 0;
};

// From the definition: -sum_c q_c log p_c with q = (1 - eps) onehot(label) + eps / V, over rows
// whose target is not pad.
Naive naive_ce(const std::vector<double>& logits, const std::vector<int32_t>& targets,
               int64_t vocab, int pad, double eps) {
  Naive out;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == pad) continue;
    const double* row = logits.data() + r * size_t(vocab);
    double mx = row[0];
    for (int64_t c = 1; c < vocab; ++c) mx = std::max(mx, row[c]);
    double z = 0;
    for (int64_t c = 0; c < vocab; ++c) z += std::exp(row[c] - mx);
    for (int64_t c = 0; c < vocab; ++c) {
      const double logp = row[c] - mx - std::log(z);
      const double q = (c == targets[r] ? 1.0 - eps : 0.0) + eps / double(vocab);
      out.loss -= q * logp;
      if (c == targets[r]) out.nll -= logp;
    }
    out.tokens += 1;
  }
  return out;
}

std::vector<double> as_double(const Tensor& t) {
  return std::vector<double>(t.f32(), t.f32() + t.numel());
}

// Random labels in 1..vocab-1 for `rows` rows, every `period`-th row (from `offset`) pad (0).
std::vector<int32_t> labels_with_pads(SplitMix64& rng, int64_t rows, int64_t vocab, int64_t period,
                                      int64_t offset) {
  std::vector<int32_t> t(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    t[size_t(r)] = r % period == offset ? 0 : int32_t(rng.randint(1, vocab - 1));
  return t;
}

// Each element of the bf16 gradient is the fp32 gradient's, rounded.
void expect_rounded_from(const Tensor& grad_bf16, const Tensor& fp32) {
  ASSERT_EQ(grad_bf16.numel(), fp32.numel());
  for (int64_t i = 0; i < fp32.numel(); ++i)
    ASSERT_EQ(grad_bf16.bf16()[i], float_to_bf16(fp32.f32()[i])) << "element " << i;
}

TEST(OpsCrossEntropy, HandComputedTinyCase) {
  // V = 3, two rows, eps = 0.1: q = 0.9 onehot + 0.1 / 3.
  Tensor logits = from({2, 3}, {1.0f, 2.0f, 0.5f, 0.2f, -1.0f, 3.0f});
  Tensor lse = Tensor::empty({2});
  const auto sums = ops::cross_entropy_forward(logits, ids_of({1, 0}), -1, 0.1f, lse);
  const double z0 = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  const double z1 = std::exp(0.2) + std::exp(-1.0) + std::exp(3.0);
  const double lp0[3] = {1.0 - std::log(z0), 2.0 - std::log(z0), 0.5 - std::log(z0)};
  const double lp1[3] = {0.2 - std::log(z1), -1.0 - std::log(z1), 3.0 - std::log(z1)};
  const double u = 0.1 / 3;
  const double loss0 = -(u * lp0[0] + (0.9 + u) * lp0[1] + u * lp0[2]);
  const double loss1 = -((0.9 + u) * lp1[0] + u * lp1[1] + u * lp1[2]);
  EXPECT_NEAR(sums.loss, loss0 + loss1, 1e-5);
  EXPECT_NEAR(sums.nll, -lp0[1] - lp1[0], 1e-5);
  EXPECT_EQ(sums.tokens, 2);
  EXPECT_NEAR(lse.f32()[0], std::log(z0), 1e-6);
  EXPECT_NEAR(lse.f32()[1], std::log(z1), 1e-6);
  // Worked out by hand: log z0 = 2.464369, and row 1's nll is log z1 - 0.2 = 2.876151.
  EXPECT_NEAR(lse.f32()[0], 2.464369, 1e-5);
  EXPECT_NEAR(-lp1[0], 2.876151, 1e-5);

  // Backward: grad_scale * (p - q).
  ops::cross_entropy_backward(logits, ids_of({1, 0}), -1, 0.1f, lse, 1.0f);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(logits.f32()[c], std::exp(lp0[c]) - (c == 1 ? 0.9 : 0.0) - u, 1e-6) << c;
    EXPECT_NEAR(logits.f32()[3 + c], std::exp(lp1[c]) - (c == 0 ? 0.9 : 0.0) - u, 1e-6) << c;
  }
}

TEST(OpsCrossEntropy, MatchesDefinitionOnRandomRows) {
  SplitMix64 rng(71);
  const int64_t n = 9, vocab = 11;
  Tensor logits = random_tensor({n, vocab}, rng, -4.0f, 4.0f);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& id : t) id = static_cast<int32_t>(rng.randint(0, vocab - 1));
  t[3] = t[7] = 0;  // pad id 0
  Tensor lse = Tensor::empty({n});
  const auto sums = ops::cross_entropy_forward(logits, ids_of(t), 0, 0.2f, lse);
  const Naive want = naive_ce(as_double(logits), t, vocab, 0, double{0.2f});
  EXPECT_NEAR(sums.loss, want.loss, 1e-4);
  EXPECT_NEAR(sums.nll, want.nll, 1e-4);
  EXPECT_EQ(sums.tokens, want.tokens);
}

TEST(OpsCrossEntropy, PadRowsAreIgnored) {
  SplitMix64 rng(72);
  const int64_t vocab = 4;
  const int pad = 2;
  Tensor logits = random_tensor({4, vocab}, rng, -2.0f, 2.0f);
  const std::vector<int32_t> t = {1, pad, 3, pad};
  Tensor lse = Tensor::empty({4});
  const auto sums = ops::cross_entropy_forward(logits, ids_of(t), pad, 0.1f, lse);
  EXPECT_EQ(sums.tokens, 2);
  // The same as the two real rows alone.
  Tensor real = Tensor::empty({2, vocab});
  for (int64_t j = 0; j < vocab; ++j) {
    real.f32()[j] = logits.f32()[0 * vocab + j];
    real.f32()[vocab + j] = logits.f32()[2 * vocab + j];
  }
  Tensor lse2 = Tensor::empty({2});
  const auto alone = ops::cross_entropy_forward(real, ids_of({1, 3}), pad, 0.1f, lse2);
  EXPECT_NEAR(sums.loss, alone.loss, 1e-6);
  EXPECT_NEAR(sums.nll, alone.nll, 1e-6);
  // Changing a pad row's logits changes nothing.
  Tensor changed = logits.clone();
  for (int64_t j = 0; j < vocab; ++j) changed.f32()[1 * vocab + j] = 50.0f * float(j);
  const auto sums2 = ops::cross_entropy_forward(changed, ids_of(t), pad, 0.1f, lse);
  EXPECT_EQ(sums2.loss, sums.loss);
  EXPECT_EQ(sums2.nll, sums.nll);

  ops::cross_entropy_backward(changed, ids_of(t), pad, 0.1f, lse, 1.0f);
  for (int64_t j = 0; j < vocab; ++j) {
    EXPECT_EQ(changed.f32()[1 * vocab + j], 0.0f) << j;
    EXPECT_EQ(changed.f32()[3 * vocab + j], 0.0f) << j;
  }
  // A real row's gradient sums to zero (p and q are both distributions).
  double row_sum = 0;
  for (int64_t j = 0; j < vocab; ++j) row_sum += changed.f32()[j];
  EXPECT_NEAR(row_sum, 0.0, 1e-6);
}

TEST(OpsCrossEntropy, NllIsMinusLogProbOfLabelAndZeroEpsLossEqualsNll) {
  SplitMix64 rng(73);
  const int64_t n = 5, vocab = 7;
  Tensor logits = random_tensor({n, vocab}, rng, -3.0f, 3.0f);
  const std::vector<int32_t> t = {6, 0, 3, 3, 1};
  Tensor lse = Tensor::empty({n});
  const auto sums = ops::cross_entropy_forward(logits, ids_of(t), -1, 0.0f, lse);
  double nll = 0;
  for (int64_t r = 0; r < n; ++r) {
    double z = 0;
    for (int64_t c = 0; c < vocab; ++c) z += std::exp(double{logits.f32()[r * vocab + c]});
    nll -= std::log(std::exp(double{logits.f32()[r * vocab + t[size_t(r)]]}) / z);
    EXPECT_NEAR(lse.f32()[r], std::log(z), 1e-5) << r;
  }
  EXPECT_NEAR(sums.nll, nll, 1e-5);
  EXPECT_NEAR(sums.loss, sums.nll, 1e-9);
  EXPECT_EQ(sums.tokens, n);
  // With smoothing the nll sum is unchanged and the loss is not.
  const auto smoothed = ops::cross_entropy_forward(logits, ids_of(t), -1, 0.1f, lse);
  EXPECT_NEAR(smoothed.nll, nll, 1e-5);
  EXPECT_GT(std::abs(smoothed.loss - smoothed.nll), 1e-3);
}

TEST(OpsCrossEntropy, BackwardMatchesFiniteDifferencesTimesGradScale) {
  SplitMix64 rng(74);
  const int64_t n = 4, vocab = 6;
  const int pad = 5;
  const float eps = 0.1f, grad_scale = 0.25f;
  Tensor logits = random_tensor({n, vocab}, rng, -2.0f, 2.0f);
  const std::vector<int32_t> t = {2, pad, 0, 4};
  Tensor lse = Tensor::empty({n});
  ops::cross_entropy_forward(logits, ids_of(t), pad, eps, lse);
  Tensor grad = logits.clone();
  ops::cross_entropy_backward(grad, ids_of(t), pad, eps, lse, grad_scale);
  std::vector<double> x = as_double(logits);
  const double h = 1e-5;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = naive_ce(x, t, vocab, pad, double{eps}).loss;
    x[i] = saved - h;
    const double down = naive_ce(x, t, vocab, pad, double{eps}).loss;
    x[i] = saved;
    EXPECT_NEAR(grad.f32()[i], grad_scale * (up - down) / (2 * h), 1e-6)
        << "row " << i / vocab << " class " << i % vocab;
  }
}

// A bf16 model's gradient, written in bf16 directly: each element is the fp32 gradient rounded,
// pad rows are zero, and the logits are left as they were; at a size that runs in parallel.
TEST(OpsCrossEntropy, Bf16GradientIsTheFp32GradientRounded) {
  SplitMix64 rng(21);
  const int64_t rows = 64, vocab = 1031;
  const int pad = 0;
  const std::vector<int32_t> t = labels_with_pads(rng, rows, vocab, 7, 3);
  const Tensor logits = random_tensor({rows, vocab}, rng, -4.0f, 4.0f);
  Tensor lse = Tensor::empty({rows});
  ops::cross_entropy_forward(logits, ids_of(t), pad, 0.1f, lse);
  const Tensor kept = logits.clone(), fp32 = logits.clone();
  Tensor grad = Tensor::empty({rows, vocab}, DType::BF16);
  ops::cross_entropy_backward(logits, ids_of(t), pad, 0.1f, lse, 0.01f, grad);
  ops::cross_entropy_backward(fp32, ids_of(t), pad, 0.1f, lse, 0.01f);
  ASSERT_EQ(0, std::memcmp(logits.raw(), kept.raw(), logits.nbytes())) << "logits changed";
  expect_rounded_from(grad, fp32);
  EXPECT_EQ(bf16_to_float(grad.bf16()[3 * vocab + 5]), 0.0f);  // a pad row
}

// Training's single pass equals forward then backward: the same sums and the same gradient, in
// fp32 over the logits and in bf16 beside them, at the benchmark's size (4100 rows, V = 8000, run
// in parallel) with pad rows among them.
TEST(OpsCrossEntropy, TrainPassEqualsForwardThenBackward) {
  SplitMix64 rng(22);
  const int64_t rows = 4100, vocab = 8000;
  const int pad = 0;
  const std::vector<int32_t> t = labels_with_pads(rng, rows, vocab, 11, 4);
  const Tensor logits = random_tensor({rows, vocab}, rng, -6.0f, 6.0f);
  const float eps = 0.1f, grad_scale = 1.0f / 3700;

  Tensor two_pass = logits.clone(), lse = Tensor::empty({rows});
  const auto want = ops::cross_entropy_forward(two_pass, ids_of(t), pad, eps, lse);
  ops::cross_entropy_backward(two_pass, ids_of(t), pad, eps, lse, grad_scale);

  Tensor one_pass = logits.clone();
  const auto got = ops::cross_entropy_train(one_pass, ids_of(t), pad, eps, grad_scale);
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_NEAR(got.loss, want.loss, 1e-12 * want.loss);
  EXPECT_NEAR(got.nll, want.nll, 1e-12 * want.nll);
  ASSERT_EQ(0, std::memcmp(one_pass.raw(), two_pass.raw(), one_pass.nbytes()));

  Tensor kept = logits.clone(), grad = Tensor::empty({rows, vocab}, DType::BF16);
  const auto got_bf16 = ops::cross_entropy_train(kept, ids_of(t), pad, eps, grad_scale, grad);
  EXPECT_NEAR(got_bf16.loss, want.loss, 1e-12 * want.loss);
  ASSERT_EQ(0, std::memcmp(kept.raw(), logits.raw(), kept.nbytes())) << "logits changed";
  expect_rounded_from(grad, two_pass);

  // And the loss itself against the definition, on a few rows in double.
  const int64_t some = 40;
  const Tensor head =
      from({some, vocab}, std::vector<float>(logits.f32(), logits.f32() + some * vocab));
  const std::vector<int32_t> head_targets(t.begin(), t.begin() + some);
  const Naive naive = naive_ce(as_double(head), head_targets, vocab, pad, double{eps});
  const auto head_sums = ops::cross_entropy_train(head, ids_of(head_targets), pad, eps, 1.0f);
  EXPECT_NEAR(head_sums.loss, naive.loss, 1e-5 * naive.loss);
  EXPECT_NEAR(head_sums.nll, naive.nll, 1e-5 * naive.nll);
}

TEST(OpsCrossEntropy, LargeLogitsAreStable) {
  const std::vector<float> base = {0.0f, 1.0f, -2.0f, 0.5f};
  std::vector<float> big = base;
  for (float& v : big) v += 1e4f;
  Tensor lb = from({1, 4}, big), ls = from({1, 4}, base);
  Tensor lse_b = Tensor::empty({1}), lse_s = Tensor::empty({1});
  const auto sb = ops::cross_entropy_forward(lb, ids_of({1}), -1, 0.1f, lse_b);
  const auto ss = ops::cross_entropy_forward(ls, ids_of({1}), -1, 0.1f, lse_s);
  EXPECT_TRUE(std::isfinite(sb.loss) && std::isfinite(sb.nll));
  EXPECT_NEAR(sb.loss, ss.loss, 1e-3);
  EXPECT_NEAR(sb.nll, ss.nll, 1e-3);
  ops::cross_entropy_backward(lb, ids_of({1}), -1, 0.1f, lse_b, 1.0f);
  ops::cross_entropy_backward(ls, ids_of({1}), -1, 0.1f, lse_s, 1.0f);
  for (int j = 0; j < 4; ++j) {
    EXPECT_TRUE(std::isfinite(lb.f32()[j])) << j;
    // lse is saved as float: near 1e4 its spacing is ~1e-3, which bounds the agreement.
    EXPECT_NEAR(lb.f32()[j], ls.f32()[j], 2e-3) << j;
  }
}

TEST(OpsCrossEntropy, TargetOutsideVocabularyThrowsUnlessPad) {
  Tensor logits = Tensor::zeros({3, 3});
  Tensor lse = Tensor::empty({3});
  EXPECT_THROW(ops::cross_entropy_forward(logits, ids_of({0, 3, 1}), -100, 0.1f, lse), Error);
  EXPECT_THROW(ops::cross_entropy_forward(logits, ids_of({0, -1, 1}), -100, 0.1f, lse), Error);
  // The pad id itself may lie outside the vocabulary.
  const auto sums = ops::cross_entropy_forward(logits, ids_of({0, -100, 2}), -100, 0.1f, lse);
  EXPECT_EQ(sums.tokens, 2);
  EXPECT_NEAR(sums.nll, 2 * std::log(3.0), 1e-6);   // uniform logits
  EXPECT_NEAR(sums.loss, 2 * std::log(3.0), 1e-6);  // smoothing of a uniform p changes nothing
}

// R-Drop's loss (ops::consistency_loss_train): rows r and r + n/2 are one target token seen
// through two dropout masks.

std::vector<double> log_softmax_of(const double* row, int64_t vocab) {
  double mx = row[0];
  for (int64_t c = 1; c < vocab; ++c) mx = std::max(mx, row[c]);
  double z = 0;
  for (int64_t c = 0; c < vocab; ++c) z += std::exp(row[c] - mx);
  std::vector<double> out(static_cast<size_t>(vocab));
  for (int64_t c = 0; c < vocab; ++c) out[size_t(c)] = row[c] - mx - std::log(z);
  return out;
}

// The sum over the pairs of counted rows of (KL(p||q) + KL(q||p)) / 2, from the definition.
double naive_consistency(const std::vector<double>& logits, const std::vector<int32_t>& targets,
                         int64_t vocab, int pad) {
  const size_t pairs = targets.size() / 2;
  double sum = 0;
  for (size_t r = 0; r < pairs; ++r) {
    if (targets[r] == pad) continue;
    const auto lp = log_softmax_of(logits.data() + r * size_t(vocab), vocab);
    const auto lq = log_softmax_of(logits.data() + (r + pairs) * size_t(vocab), vocab);
    for (size_t c = 0; c < size_t(vocab); ++c)
      sum += 0.5 * (std::exp(lp[c]) * (lp[c] - lq[c]) + std::exp(lq[c]) * (lq[c] - lp[c]));
  }
  return sum;
}

double naive_rdrop_loss(const std::vector<double>& logits, const std::vector<int32_t>& targets,
                        int64_t vocab, int pad, double eps, double alpha) {
  return naive_ce(logits, targets, vocab, pad, eps).loss +
         alpha * naive_consistency(logits, targets, vocab, pad);
}

// The gradient of grad_scale * naive_rdrop_loss, worked out on paper and computed in double:
// (p - q_ls) + alpha (p (d - E_p[d]) + p - q) / 2 for the first row of a pair, d = log p - log q,
// and the same with p and q swapped for the second (checked against finite differences below).
std::vector<double> naive_rdrop_gradient(const std::vector<double>& logits,
                                         const std::vector<int32_t>& targets, int64_t vocab,
                                         int pad, double eps, double alpha, double grad_scale) {
  const size_t pairs = targets.size() / 2, v = size_t(vocab);
  std::vector<double> g(logits.size(), 0.0);
  for (size_t r = 0; r < pairs; ++r) {
    if (targets[r] == pad) continue;
    const auto lp = log_softmax_of(logits.data() + r * v, vocab);
    const auto lq = log_softmax_of(logits.data() + (r + pairs) * v, vocab);
    double ep = 0, eq = 0;
    for (size_t c = 0; c < v; ++c) {
      ep += std::exp(lp[c]) * (lp[c] - lq[c]);
      eq += std::exp(lq[c]) * (lp[c] - lq[c]);
    }
    for (size_t c = 0; c < v; ++c) {
      const double p = std::exp(lp[c]), q = std::exp(lq[c]), d = lp[c] - lq[c];
      const double smooth = (c == size_t(targets[r]) ? 1.0 - eps : 0.0) + eps / double(vocab);
      g[r * v + c] = grad_scale * (p - smooth + alpha * 0.5 * (p * (d - ep) + p - q));
      g[(r + pairs) * v + c] = grad_scale * (q - smooth + alpha * 0.5 * (q * (eq - d) + q - p));
    }
  }
  return g;
}

// Two passes' logits: the first random, the second the first moved by up to `spread`, as a
// different dropout mask moves them.
Tensor two_passes(SplitMix64& rng, int64_t pairs, int64_t vocab, float spread) {
  Tensor t = random_tensor({2 * pairs, vocab}, rng, -4.0f, 4.0f);
  float* p = t.f32();
  for (int64_t i = 0; i < pairs * vocab; ++i)
    p[pairs * vocab + i] = p[i] + spread * (2.0f * float(rng.uniform()) - 1.0f);
  return t;
}

std::vector<int32_t> paired(const std::vector<int32_t>& targets) {
  std::vector<int32_t> t = targets;
  t.insert(t.end(), targets.begin(), targets.end());
  return t;
}

TEST(OpsRDrop, HandComputedPair) {
  // p = softmax(0, ln 3) = (1/4, 3/4), q = softmax(0, 0) = (1/2, 1/2):
  // KL(p||q) = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.130812, KL(q||p) = 1/2 ln 2 + 1/2 ln(2/3) = 0.143841.
  Tensor logits = from({2, 2}, {0.0f, std::log(3.0f), 0.0f, 0.0f});
  const auto sums = ops::consistency_loss_train(logits, ids_of({1, 1}), -1, 0.0f, 1.0f, 1.0f);
  EXPECT_NEAR(sums.consistency, (0.130812 + 0.143841) / 2, 1e-6);
  EXPECT_EQ(sums.tokens, 2);
  EXPECT_NEAR(sums.nll, std::log(4.0 / 3.0) + std::log(2.0), 1e-6);
  // d = log p - log q = (ln 1/2, ln 3/2); E_p[d] = KL(p||q), and row 0's gradient (alpha 1):
  // p - onehot + (p (d - E_p[d]) + p - q) / 2 at class 0 = 1/4 + (1/4 (ln 1/2 - 0.130812) - 1/4)
  // / 2.
  EXPECT_NEAR(logits.f32()[0], 0.25 + (0.25 * (std::log(0.5) - 0.130812) - 0.25) / 2, 1e-6);
  // Each row's gradient sums to zero: every term is a difference of two distributions.
  EXPECT_NEAR(logits.f32()[0] + logits.f32()[1], 0.0, 1e-6);
  EXPECT_NEAR(logits.f32()[2] + logits.f32()[3], 0.0, 1e-6);
}

TEST(OpsRDrop, MatchesDefinitionAndFiniteDifferences) {
  SplitMix64 rng(81);
  const int64_t pairs = 5, vocab = 7;
  const int pad = 0;
  const float eps = 0.1f, alpha = 2.0f, grad_scale = 0.3f;
  const Tensor logits = two_passes(rng, pairs, vocab, 1.5f);
  const std::vector<int32_t> t = paired({3, pad, 6, 1, 1});
  Tensor grad = logits.clone();
  const auto sums = ops::consistency_loss_train(grad, ids_of(t), pad, eps, alpha, grad_scale);
  std::vector<double> x = as_double(logits);
  const Naive ce = naive_ce(x, t, vocab, pad, double{eps});
  EXPECT_NEAR(sums.loss, ce.loss, 1e-5);
  EXPECT_NEAR(sums.nll, ce.nll, 1e-5);
  EXPECT_EQ(sums.tokens, 8);
  const double consistency = naive_consistency(x, t, vocab, pad);
  EXPECT_GT(consistency, 0.1);  // the passes differ enough for the term to matter
  EXPECT_NEAR(sums.consistency, consistency, 1e-5);

  const double h = 1e-5;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = naive_rdrop_loss(x, t, vocab, pad, double{eps}, double{alpha});
    x[i] = saved - h;
    const double down = naive_rdrop_loss(x, t, vocab, pad, double{eps}, double{alpha});
    x[i] = saved;
    EXPECT_NEAR(grad.f32()[i], grad_scale * (up - down) / (2 * h), 1e-6)
        << "row " << i / vocab << " class " << i % vocab;
  }
  const std::vector<double> worked =
      naive_rdrop_gradient(x, t, vocab, pad, double{eps}, double{alpha}, double{grad_scale});
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(grad.f32()[i], worked[i], 1e-6) << i;
}

// Two identical passes (no dropout) diverge by nothing: the loss and its gradient are plain
// cross-entropy's.
TEST(OpsRDrop, IdenticalPassesAddNothing) {
  SplitMix64 rng(82);
  const int64_t pairs = 30, vocab = 1031;
  const int pad = 0;
  const Tensor logits = two_passes(rng, pairs, vocab, 0.0f);
  const std::vector<int32_t> t = paired(labels_with_pads(rng, pairs, vocab, 7, 2));
  Tensor rdrop = logits.clone(), plain = logits.clone();
  const auto r = ops::consistency_loss_train(rdrop, ids_of(t), pad, 0.1f, 5.0f, 0.01f);
  const auto c = ops::cross_entropy_train(plain, ids_of(t), pad, 0.1f, 0.01f);
  EXPECT_EQ(r.tokens, c.tokens);
  EXPECT_NEAR(r.loss, c.loss, 1e-9 * c.loss);
  EXPECT_NEAR(r.consistency, 0.0, 1e-9);
  for (int64_t i = 0; i < logits.numel(); ++i)
    ASSERT_NEAR(rdrop.f32()[i], plain.f32()[i], 1e-9) << "element " << i;
}

// At a training batch's size (2 x 2000 rows, V = 6000, run in parallel), with pad pairs: the sums
// and the gradient against the double-precision reference, and the bf16 gradient the fp32 one
// rounded with the logits left alone.
TEST(OpsRDrop, AtTrainingSizeMatchesTheDoubleReference) {
  SplitMix64 rng(83);
  const int64_t pairs = 2000, vocab = 6000;
  const int pad = 0;
  const float eps = 0.1f, alpha = 5.0f, grad_scale = 1.0f / 3700;
  const Tensor logits = two_passes(rng, pairs, vocab, 1.0f);
  const std::vector<int32_t> t = paired(labels_with_pads(rng, pairs, vocab, 9, 5));
  Tensor grad = logits.clone();
  const auto sums = ops::consistency_loss_train(grad, ids_of(t), pad, eps, alpha, grad_scale);
  const std::vector<double> x = as_double(logits);
  const Naive ce = naive_ce(x, t, vocab, pad, double{eps});
  EXPECT_EQ(sums.tokens, ce.tokens);
  EXPECT_NEAR(sums.loss, ce.loss, 1e-6 * ce.loss);
  EXPECT_NEAR(sums.nll, ce.nll, 1e-6 * ce.nll);
  const double consistency = naive_consistency(x, t, vocab, pad);
  EXPECT_NEAR(sums.consistency, consistency, 1e-5 * consistency);
  const std::vector<double> want =
      naive_rdrop_gradient(x, t, vocab, pad, double{eps}, double{alpha}, double{grad_scale});
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(double{grad.f32()[i]} - want[i]));
  EXPECT_LT(worst, 1e-6 * grad_scale) << "largest difference from the double reference";

  Tensor kept = logits.clone(), grad_bf16 = Tensor::empty({2 * pairs, vocab}, DType::BF16);
  const auto sums_bf16 =
      ops::consistency_loss_train(kept, ids_of(t), pad, eps, alpha, grad_scale, grad_bf16);
  EXPECT_EQ(sums_bf16.consistency, sums.consistency);
  ASSERT_EQ(0, std::memcmp(kept.raw(), logits.raw(), kept.nbytes())) << "logits changed";
  expect_rounded_from(grad_bf16, grad);
}

TEST(OpsRDrop, RefusesRowsWhoseTargetsDoNotPair) {
  Tensor logits = Tensor::zeros({4, 3});
  EXPECT_THROW(ops::consistency_loss_train(logits, ids_of({1, 2, 1, 0}), 0, 0.1f, 1.0f, 1.0f),
               Error);
  Tensor odd = Tensor::zeros({3, 3});
  EXPECT_THROW(ops::consistency_loss_train(odd, ids_of({1, 1, 1}), 0, 0.1f, 1.0f, 1.0f), Error);
}

}  // namespace
}  // namespace transduce
