// Fused attention for inference: scores, mask, softmax and the weighted sum of values per query
// in one pass over that query's keys, without a probability tensor. In incremental decoding a
// head's query meets a few dozen keys: one BLAS call per (sentence, head) would cost more in call
// overhead than the arithmetic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"

namespace transduce::ops {

void attention_inference(const Tensor& q, const Tensor& keys, const Tensor& values, int64_t lk,
                         int64_t heads, float scale, const Tensor& key_pad, bool causal,
                         int64_t causal_offset, const Tensor& context, const Tensor& probs) {
  require_cpu({&q, &keys, &values, &context});
  const int64_t batch = q.dim(0), lq = q.dim(1), cap = keys.dim(1);
  TD_CHECK(q.ndim() == 3 && keys.ndim() == 3 && values.ndim() == 3 && context.ndim() == 3 &&
               keys.dim(0) == batch && values.dim(0) == batch && values.dim(1) == cap &&
               lk <= cap && heads > 0 && q.dim(2) % heads == 0 && keys.dim(2) == q.dim(2) &&
               values.dim(2) % heads == 0 && context.dim(0) == batch && context.dim(1) == lq &&
               context.dim(2) == values.dim(2),
           "attention_inference q {} keys {} values {} over {} keys, {} heads -> {}",
           q.shape().str(), keys.shape().str(), values.shape().str(), lk, heads,
           context.shape().str());
  TD_CHECK(!probs.defined() || (probs.ndim() == 4 && probs.dim(0) == batch &&
                                probs.dim(1) == heads && probs.dim(2) == lq && probs.dim(3) == lk),
           "attention_inference weights {} for {} sentences, {} heads, {} queries, {} keys",
           probs.shape().str(), batch, heads, lq, lk);
  float* pw = probs.defined() ? probs.f32() : nullptr;
  const uint8_t* pad = key_pad_data(key_pad, batch, lk);
  const int64_t dk = q.dim(2) / heads, dv = values.dim(2) / heads;
  const int64_t wq = heads * dk, wv = heads * dv;
  const float* pq = q.f32();
  const float* pk = keys.f32();
  const float* pv = values.f32();
  float* pc = context.f32();
#pragma omp parallel if (parallel_worth_it(batch * heads * lq * lk * (dk + dv)))
  {
    std::vector<float> p(static_cast<size_t>(lk));
#pragma omp for schedule(static)
    for (int64_t bh = 0; bh < batch * heads; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      const uint8_t* prow = pad ? pad + b * lk : nullptr;
      const float* kb = pk + b * cap * wq + h * dk;
      const float* vb = pv + b * cap * wv + h * dv;
      for (int64_t i = 0; i < lq; ++i) {
        const float* qi = pq + (b * lq + i) * wq + h * dk;
        float* ci = pc + (b * lq + i) * wv + h * dv;
        const int64_t visible = causal ? std::clamp<int64_t>(i + causal_offset + 1, 0, lk) : lk;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          if (prow && prow[j]) continue;
          const float* kj = kb + j * wq;
          float dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int64_t d = 0; d < dk; ++d) dot += qi[d] * kj[d];
          p[j] = scale * dot;
          mx = std::max(mx, p[j]);
        }
        std::fill(ci, ci + dv, 0.0f);
        float* wi = pw ? pw + ((b * heads + h) * lq + i) * lk : nullptr;
        if (wi) std::fill(wi, wi + lk, 0.0f);
        if (mx == -std::numeric_limits<float>::infinity()) continue;  // every key hidden
        float sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          if (prow && prow[j]) continue;
          p[j] = fast_exp(p[j] - mx);
          sum += p[j];
        }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < visible; ++j) {
          if (prow && prow[j]) continue;
          const float w = p[j] * inv;
          if (wi) wi[j] = w;
          const float* vj = vb + j * wv;
#pragma omp simd
          for (int64_t d = 0; d < dv; ++d) ci[d] += w * vj[d];
        }
      }
    }
  }
}

}  // namespace transduce::ops
