// Label-smoothed cross-entropy that skips padding, forward and backward over logits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/phase_clock.h"
#include "ops/cpu/logit_rows.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

using logit_rows::add_row_loss;
using logit_rows::bf16_gradient;
using logit_rows::check_targets;
using logit_rows::row_stats;
using logit_rows::RowStats;
using logit_rows::store;

// grad_scale * (softmax(row) - q) into dst (float: may be the row itself; uint16_t: bf16), or
// zeros for an ignored row.
template <class Out>
void gradient_row(const float* row, float lse, int32_t target, int64_t vocab, int pad_id, float eps,
                  float grad_scale, Out* dst) {
  if (target == pad_id) {
    std::memset(dst, 0, static_cast<size_t>(vocab) * sizeof(Out));  // 0 in both types
    return;
  }
  const float uniform = eps / static_cast<float>(vocab);
  const float label = grad_scale * (1.0f - eps);
#pragma omp simd
  for (int64_t j = 0; j < vocab; ++j)
    store(dst + j, grad_scale * (fast_exp(row[j] - lse) - uniform) - (j == target ? label : 0.0f));
}

// Each row's statistics and loss, saving its log-sum-exp in plse (when given) and writing its
// gradient into out (when given) while the row is in cache.
template <class Out>
CrossEntropySums loss_rows(const float* pl, const int32_t* pt, int64_t n, int64_t vocab, int pad_id,
                           float eps, float* plse, float grad_scale, Out* out) {
  double loss = 0, nll = 0;
  int64_t tokens = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss, nll, tokens) \
    if (parallel_worth_it(n * vocab))
  for (int64_t r = 0; r < n; ++r) {
    const float* row = pl + r * vocab;
    const int32_t target = pt[r];
    float lse = 0.0f;
    if (plse || target != pad_id) {
      const RowStats st = row_stats(row, vocab);
      lse = static_cast<float>(st.lse);
      if (plse) plse[r] = lse;
      if (target != pad_id) {
        add_row_loss(st, row[target], vocab, eps, loss, nll);
        tokens += 1;
      }
    }
    if (out) gradient_row(row, lse, target, vocab, pad_id, eps, grad_scale, out + r * vocab);
  }
  return {loss, nll, tokens};
}

// The gradient rows into out (float: over the logits themselves; uint16_t: bf16 elsewhere).
template <class Out>
void gradient_rows(const float* pl, const int32_t* pt, const float* plse, int64_t n, int64_t vocab,
                   int pad_id, float eps, float grad_scale, Out* out) {
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * vocab))
  for (int64_t r = 0; r < n; ++r)
    gradient_row(pl + r * vocab, plse[r], pt[r], vocab, pad_id, eps, grad_scale, out + r * vocab);
}

}  // namespace

CrossEntropySums cross_entropy_forward(const Tensor& logits, const Tensor& targets, int pad_id,
                                       float eps, const Tensor& lse) {
  require_cpu({&logits, &targets, &lse});
  const int64_t n = logits.rows(), vocab = logits.cols();
  TD_CHECK(targets.numel() == n && lse.numel() == n, "cross_entropy shapes");
  check_targets(targets.i32(), n, vocab, pad_id);
  return loss_rows<float>(logits.f32(), targets.i32(), n, vocab, pad_id, eps, lse.f32(), 0.0f,
                          nullptr);
}

CrossEntropySums cross_entropy_train(const Tensor& logits, const Tensor& targets, int pad_id,
                                     float eps, float grad_scale, const Tensor& grad_bf16) {
  const PhaseScope phase(Phase::kLoss);
  require_cpu({&logits, &targets});
  const int64_t n = logits.rows(), vocab = logits.cols();
  TD_CHECK(targets.numel() == n, "cross_entropy shapes");
  check_targets(targets.i32(), n, vocab, pad_id);
  if (!grad_bf16.defined())
    return loss_rows(logits.f32(), targets.i32(), n, vocab, pad_id, eps, nullptr, grad_scale,
                     logits.f32());
  return loss_rows(logits.f32(), targets.i32(), n, vocab, pad_id, eps, nullptr, grad_scale,
                   bf16_gradient(grad_bf16, logits, "cross_entropy_train"));
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int pad_id, float eps,
                            const Tensor& lse, float grad_scale, const Tensor& grad_bf16) {
  require_cpu({&logits, &targets, &lse});
  const int64_t n = logits.rows(), vocab = logits.cols();
  if (!grad_bf16.defined())
    return gradient_rows(logits.f32(), targets.i32(), lse.f32(), n, vocab, pad_id, eps, grad_scale,
                         logits.f32());
  gradient_rows(logits.f32(), targets.i32(), lse.f32(), n, vocab, pad_id, eps, grad_scale,
                bf16_gradient(grad_bf16, logits, "cross_entropy_backward"));
}

}  // namespace transduce::ops
