// Label-smoothed cross-entropy that skips padding, forward and backward over logits.
#include <cmath>
#include <cstring>

#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"

namespace transduce::ops {

CrossEntropySums cross_entropy_forward(const Tensor& logits, const Tensor& targets, int pad_id,
                                       float eps, const Tensor& lse) {
  require_cpu({&logits, &targets, &lse});
  const int64_t n = logits.rows(), vocab = logits.cols();
  TD_CHECK(targets.numel() == n && lse.numel() == n, "cross_entropy shapes");
  const float* pl = logits.f32();
  const int32_t* pt = targets.i32();
  float* plse = lse.f32();
  for (int64_t r = 0; r < n; ++r)
    if (pt[r] != pad_id && (pt[r] < 0 || pt[r] >= vocab))
      fail("target id {} at position {} is outside the vocabulary of {}", pt[r], r, vocab);
  double loss = 0, nll = 0;
  int64_t tokens = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss, nll, tokens) \
    if (parallel_worth_it(n * vocab))
  for (int64_t r = 0; r < n; ++r) {
    const float* row = pl + r * vocab;
    float mx = row[0];
    for (int64_t j = 1; j < vocab; ++j) mx = std::max(mx, row[j]);
    float sum_exp = 0, sum_logit = 0;
#pragma omp simd reduction(+ : sum_exp, sum_logit)
    for (int64_t j = 0; j < vocab; ++j) {
      sum_exp += fast_exp(row[j] - mx);
      sum_logit += row[j];
    }
    const double l = mx + std::log(double{sum_exp});
    plse[r] = static_cast<float>(l);
    if (pt[r] == pad_id) continue;
    const double nll_r = l - row[pt[r]];
    // -sum_c q_c log p_c with q = (1 - eps) onehot + eps / V.
    const double smooth = l - sum_logit / vocab;
    loss += (1.0 - eps) * nll_r + eps * smooth;
    nll += nll_r;
    tokens += 1;
  }
  return {loss, nll, tokens};
}

namespace {

inline void store(float* out, float x) {
  *out = x;
}
inline void store(uint16_t* out, float x) {
  *out = float_to_bf16(x);
}

// The gradient rows into out (float: over the logits themselves; uint16_t: bf16 elsewhere).
template <class Out>
void gradient_rows(const float* pl, const int32_t* pt, const float* plse, int64_t n, int64_t vocab,
                   int pad_id, float eps, float grad_scale, Out* out) {
  const float uniform = eps / vocab;
  const float label = grad_scale * (1.0f - eps);
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * vocab))
  for (int64_t r = 0; r < n; ++r) {
    const float* row = pl + r * vocab;
    Out* dst = out + r * vocab;
    const int32_t target = pt[r];
    if (target == pad_id) {
      std::memset(dst, 0, static_cast<size_t>(vocab) * sizeof(Out));  // 0 in both types
      continue;
    }
    const float l = plse[r];
#pragma omp simd
    for (int64_t j = 0; j < vocab; ++j)
      store(dst + j, grad_scale * (fast_exp(row[j] - l) - uniform) - (j == target ? label : 0.0f));
  }
}

}  // namespace

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int pad_id, float eps,
                            const Tensor& lse, float grad_scale, const Tensor& grad_bf16) {
  require_cpu({&logits, &targets, &lse});
  const int64_t n = logits.rows(), vocab = logits.cols();
  if (!grad_bf16.defined())
    return gradient_rows(logits.f32(), targets.i32(), lse.f32(), n, vocab, pad_id, eps, grad_scale,
                         logits.f32());
  require_cpu({&grad_bf16});
  TD_CHECK(grad_bf16.numel() == logits.numel(), "cross_entropy_backward: bf16 gradient {} for {}",
           grad_bf16.shape().str(), logits.shape().str());
  gradient_rows(logits.f32(), targets.i32(), lse.f32(), n, vocab, pad_id, eps, grad_scale,
                grad_bf16.bf16());
}

}  // namespace transduce::ops
