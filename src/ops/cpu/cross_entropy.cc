// Label-smoothed cross-entropy that skips padding, forward and backward over logits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

void check_targets(const int32_t* pt, int64_t n, int64_t vocab, int pad_id) {
  for (int64_t r = 0; r < n; ++r)
    if (pt[r] != pad_id && (pt[r] < 0 || pt[r] >= vocab))
      fail("target id {} at position {} is outside the vocabulary of {}", pt[r], r, vocab);
}

// A row's log-sum-exp, and the sum of its logits (for the smoothing term).
struct RowStats {
  double lse;
  float sum_logit;
};

RowStats row_stats(const float* row, int64_t vocab) {
  float mx = row[0];
#pragma omp simd reduction(max : mx)
  for (int64_t j = 1; j < vocab; ++j) mx = std::max(mx, row[j]);
  float sum_exp = 0, sum_logit = 0;
#pragma omp simd reduction(+ : sum_exp, sum_logit)
  for (int64_t j = 0; j < vocab; ++j) {
    sum_exp += fast_exp(row[j] - mx);
    sum_logit += row[j];
  }
  return {mx + std::log(double{sum_exp}), sum_logit};
}

// Adds a counted row's smoothed loss and -log p(label) to the sums:
// -sum_c q_c log p_c with q = (1 - eps) onehot + eps / V.
void add_row_loss(const RowStats& st, float label_logit, int64_t vocab, float eps, double& loss,
                  double& nll) {
  const double nll_r = st.lse - label_logit;
  const double smooth = st.lse - double{st.sum_logit} / static_cast<double>(vocab);
  loss += (1.0 - eps) * nll_r + eps * smooth;
  nll += nll_r;
}

inline void store(float* out, float x) {
  *out = x;
}
inline void store(uint16_t* out, float x) {
  *out = float_to_bf16(x);
}

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

// A bf16 gradient's destination, checked against the logits it is the gradient of.
uint16_t* bf16_gradient(const Tensor& grad_bf16, const Tensor& logits, const char* op) {
  require_cpu({&grad_bf16});
  TD_CHECK(grad_bf16.numel() == logits.numel(), "{}: bf16 gradient {} for {}", op,
           grad_bf16.shape().str(), logits.shape().str());
  return grad_bf16.bf16();
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
