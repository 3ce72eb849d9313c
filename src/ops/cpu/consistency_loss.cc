// R-Drop's training loss (Liang et al., 2021): the label-smoothed cross-entropy of every row, plus
// a weighted symmetric KL divergence between the two rows that saw the same target token through
// different dropout masks. Forward and backward in one pass over each pair of rows.
#include <cstring>

#include "core/phase_clock.h"
#include "ops/cpu/logit_rows.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

using logit_rows::add_row_loss;
using logit_rows::row_stats;
using logit_rows::RowStats;
using logit_rows::store;

// For p = softmax(a), q = softmax(b) and d = log p - log q, the expectations of d under p and
// under q; KL(p||q) + KL(q||p) = E_p[d] - E_q[d].
struct PairStats {
  float ep, eq;
};

PairStats pair_stats(const float* a, const float* b, float la, float lb, int64_t vocab) {
  float ep = 0, eq = 0;
#pragma omp simd reduction(+ : ep, eq)
  for (int64_t j = 0; j < vocab; ++j) {
    const float lpa = a[j] - la, lpb = b[j] - lb, d = lpa - lpb;
    ep += fast_exp(lpa) * d;
    eq += fast_exp(lpb) * d;
  }
  return {ep, eq};
}

// The gradients of both rows of a pair, each element computed from both rows before either is
// written (out may be the logits themselves):
//   d/da [CE(a)] = p - q_ls,  d/da [(KL(p||q) + KL(q||p)) / 2] = (p (d - E_p[d]) + p - q) / 2,
// and the same for b with p and q, and d and -d, swapped.
template <class Out>
void pair_gradient(const float* a, const float* b, float la, float lb, PairStats s, int32_t target,
                   int64_t vocab, float eps, float alpha, float grad_scale, Out* ga, Out* gb) {
  const float uniform = eps / static_cast<float>(vocab);
  const float label = grad_scale * (1.0f - eps), half = 0.5f * alpha * grad_scale;
#pragma omp simd
  for (int64_t j = 0; j < vocab; ++j) {
    const float lpa = a[j] - la, lpb = b[j] - lb, d = lpa - lpb;
    const float p = fast_exp(lpa), q = fast_exp(lpb), on = j == target ? label : 0.0f;
    const float da = grad_scale * (p - uniform) - on + half * (p * (d - s.ep) + p - q);
    const float db = grad_scale * (q - uniform) - on + half * (q * (s.eq - d) + q - p);
    store(ga + j, da);
    store(gb + j, db);
  }
}

template <class Out>
CrossEntropySums consistency_rows(const float* pl, const int32_t* pt, int64_t pairs, int64_t vocab,
                                  int pad_id, float eps, float alpha, float grad_scale, Out* out) {
  double loss = 0, nll = 0, consistency = 0;
  int64_t tokens = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss, nll, consistency, tokens) \
    if (parallel_worth_it(2 * pairs * vocab))
  for (int64_t r = 0; r < pairs; ++r) {
    const float *a = pl + r * vocab, *b = pl + (r + pairs) * vocab;
    Out *ga = out + r * vocab, *gb = out + (r + pairs) * vocab;
    const int32_t target = pt[r];
    if (target == pad_id) {
      std::memset(ga, 0, static_cast<size_t>(vocab) * sizeof(Out));  // 0 in both types
      std::memset(gb, 0, static_cast<size_t>(vocab) * sizeof(Out));
      continue;
    }
    const RowStats sa = row_stats(a, vocab), sb = row_stats(b, vocab);
    add_row_loss(sa, a[target], vocab, eps, loss, nll);
    add_row_loss(sb, b[target], vocab, eps, loss, nll);
    tokens += 2;
    const float la = static_cast<float>(sa.lse), lb = static_cast<float>(sb.lse);
    const PairStats s = pair_stats(a, b, la, lb, vocab);
    consistency += 0.5 * (double{s.ep} - double{s.eq});
    pair_gradient(a, b, la, lb, s, target, vocab, eps, alpha, grad_scale, ga, gb);
  }
  return {loss, nll, tokens, consistency};
}

}  // namespace

CrossEntropySums consistency_loss_train(const Tensor& logits, const Tensor& targets, int pad_id,
                                        float eps, float alpha, float grad_scale,
                                        const Tensor& grad_bf16) {
  const PhaseScope phase(Phase::kLoss);
  require_cpu({&logits, &targets});
  const int64_t n = logits.rows(), vocab = logits.cols(), pairs = n / 2;
  TD_CHECK(targets.numel() == n && n % 2 == 0, "consistency_loss shapes: {} logits, {} targets",
           logits.shape().str(), targets.shape().str());
  const int32_t* pt = targets.i32();
  logit_rows::check_targets(pt, n, vocab, pad_id);
  for (int64_t r = 0; r < pairs; ++r)
    TD_CHECK(pt[r] == pt[r + pairs], "consistency_loss: rows {} and {} have different targets", r,
             r + pairs);
  if (!grad_bf16.defined())
    return consistency_rows(logits.f32(), pt, pairs, vocab, pad_id, eps, alpha, grad_scale,
                            logits.f32());
  return consistency_rows(logits.f32(), pt, pairs, vocab, pad_id, eps, alpha, grad_scale,
                          logit_rows::bf16_gradient(grad_bf16, logits, "consistency_loss_train"));
}

}  // namespace transduce::ops
