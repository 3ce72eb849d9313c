// Masked, numerically stable softmax over attention scores, and its backward.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"
#include "ops/visible_keys.h"

namespace transduce::ops {

void masked_softmax(const Tensor& scores, int64_t batch, int64_t heads, const Tensor& key_pad,
                    bool causal, int64_t causal_offset, int64_t window) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&scores});
  const int64_t lk = scores.cols();
  const int64_t lq = scores.rows() / (batch * heads);
  TD_CHECK(lq * batch * heads == scores.rows(), "softmax rows {} for batch {} heads {}",
           scores.rows(), batch, heads);
  const uint8_t* pad = key_pad_data(key_pad, batch, lk);
  float* s = scores.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(scores.numel()))
  for (int64_t r = 0; r < scores.rows(); ++r) {
    const int64_t b = r / (heads * lq), q = r % lq;
    float* row = s + r * lk;
    const uint8_t* prow = pad ? pad + b * lk : nullptr;
    // Keys outside [first, visible) are hidden by the causal mask and the window.
    const KeyRange keys = visible_keys(q + causal_offset, lk, causal, window);
    const int64_t first = keys.first, visible = keys.end;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = first; j < visible; ++j)
      if (!prow || !prow[j]) mx = std::max(mx, row[j]);
    if (mx == -std::numeric_limits<float>::infinity()) {
      std::fill(row, row + lk, 0.0f);
      continue;
    }
    float sum = 0;
    if (prow) {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = first; j < visible; ++j) {
        const float e = prow[j] ? 0.0f : fast_exp(row[j] - mx);
        row[j] = e;
        sum += e;
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = first; j < visible; ++j) {
        row[j] = fast_exp(row[j] - mx);
        sum += row[j];
      }
    }
    const float inv = 1.0f / sum;
    for (int64_t j = first; j < visible; ++j) row[j] *= inv;
    std::fill(row, row + first, 0.0f);
    std::fill(row + visible, row + lk, 0.0f);
  }
}

void softmax_backward(const Tensor& probs, const Tensor& dscores, float scale) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&probs, &dscores});
  TD_CHECK(probs.shape() == dscores.shape(), "softmax_backward shapes");
  const int64_t n = probs.cols();
  const float* p = probs.f32();
  float* d = dscores.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(probs.numel()))
  for (int64_t r = 0; r < probs.rows(); ++r) {
    const float* pr = p + r * n;
    float* dr = d + r * n;
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t j = 0; j < n; ++j) dot += pr[j] * dr[j];
    for (int64_t j = 0; j < n; ++j) dr[j] = scale * pr[j] * (dr[j] - dot);
  }
}

}  // namespace transduce::ops
