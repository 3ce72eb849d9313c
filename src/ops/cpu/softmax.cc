// Masked, numerically stable softmax over attention scores, and its backward.
#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/softmax_rows.h"
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
    const uint8_t* prow = pad ? pad + b * lk : nullptr;
    // Keys outside the range are hidden by the causal mask and the window.
    masked_softmax_row(s + r * lk, lk, visible_keys(q + causal_offset, lk, causal, window), prow);
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
    softmax_backward_row(p + r * n, d + r * n, n, scale);
  }
}

}  // namespace transduce::ops
