// The fused Adam update.
#include <cmath>

#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

// The update over n elements; with kCopy, each updated parameter is also rounded into pb.
template <bool kCopy>
void adam_loop(float* p, const float* g, float* pm, float* pv, uint16_t* pb, int64_t n, float lr,
               float beta1, float beta2, float eps, float c1, float c2) {
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) {
    pm[i] = beta1 * pm[i] + (1.0f - beta1) * g[i];
    pv[i] = beta2 * pv[i] + (1.0f - beta2) * g[i] * g[i];
    p[i] -= lr * (pm[i] * c1) / (std::sqrt(pv[i] * c2) + eps);
    if constexpr (kCopy) pb[i] = float_to_bf16(p[i]);
  }
}

}  // namespace

void adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                 float lr, float beta1, float beta2, float eps, int64_t t,
                 const Tensor& param_bf16) {
  require_cpu({&param, &grad, &m, &v});
  TD_CHECK(
      param.numel() == grad.numel() && param.numel() == m.numel() && param.numel() == v.numel(),
      "adam_update shapes");
  const float c1 = 1.0f / (1.0f - static_cast<float>(std::pow(beta1, static_cast<double>(t))));
  const float c2 = 1.0f / (1.0f - static_cast<float>(std::pow(beta2, static_cast<double>(t))));
  float *p = param.f32(), *pm = m.f32(), *pv = v.f32();
  const float* g = grad.f32();
  const int64_t n = param.numel();
  if (!param_bf16.defined())
    return adam_loop<false>(p, g, pm, pv, nullptr, n, lr, beta1, beta2, eps, c1, c2);
  require_cpu({&param_bf16});
  TD_CHECK(param_bf16.numel() == n, "adam_update's bf16 copy has {} elements for {}",
           param_bf16.numel(), n);
  adam_loop<true>(p, g, pm, pv, param_bf16.bf16(), n, lr, beta1, beta2, eps, c1, c2);
}

}  // namespace transduce::ops
