// Conversions between element types.
#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/ops.h"

namespace transduce::ops {

void to_bf16(const Tensor& src, const Tensor& dst) {
  require_cpu({&src, &dst});
  TD_CHECK(src.numel() == dst.numel(), "to_bf16: {} into {}", src.shape().str(), dst.shape().str());
  const float* s = src.f32();
  uint16_t* d = dst.bf16();
  const int64_t n = src.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(s[i]);
}

void relu_to_bf16(const Tensor& src, const Tensor& dst) {
  require_cpu({&src, &dst});
  TD_CHECK(src.numel() == dst.numel() && src.dtype() == DType::F32 && dst.dtype() == DType::BF16,
           "relu_to_bf16: {} {} into {} {}", dtype_name(src.dtype()), src.shape().str(),
           dtype_name(dst.dtype()), dst.shape().str());
  const float* s = src.f32();
  uint16_t* d = dst.bf16();
  const int64_t n = src.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(s[i] > 0.0f ? s[i] : 0.0f);
}

}  // namespace transduce::ops
