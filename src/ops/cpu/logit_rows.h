// Per-row pieces of the training losses over logits (cross_entropy.cc, consistency_loss.cc): the
// target check, a row's log-sum-exp, its label-smoothed loss, and where a gradient goes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"

namespace transduce::ops::logit_rows {

inline void check_targets(const int32_t* pt, int64_t n, int64_t vocab, int pad_id) {
  for (int64_t r = 0; r < n; ++r)
    if (pt[r] != pad_id && (pt[r] < 0 || pt[r] >= vocab))
      fail("target id {} at position {} is outside the vocabulary of {}", pt[r], r, vocab);
}

// A row's log-sum-exp, and the sum of its logits (for the smoothing term).
struct RowStats {
  double lse;
  float sum_logit;
};

inline RowStats row_stats(const float* row, int64_t vocab) {
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
inline void add_row_loss(const RowStats& st, float label_logit, int64_t vocab, float eps,
                         double& loss, double& nll) {
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

// A bf16 gradient's destination, checked against the logits it is the gradient of.
inline uint16_t* bf16_gradient(const Tensor& grad_bf16, const Tensor& logits, const char* op) {
  require_cpu({&grad_bf16});
  TD_CHECK(grad_bf16.numel() == logits.numel(), "{}: bf16 gradient {} for {}", op,
           grad_bf16.shape().str(), logits.shape().str());
  return grad_bf16.bf16();
}

}  // namespace transduce::ops::logit_rows
