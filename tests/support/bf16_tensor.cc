#include "support/bf16_tensor.h"

#include "core/bf16.h"
#include "ops/ops.h"

namespace transduce::testing {

Tensor bf16_of(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::BF16);
  ops::to_bf16(t, out);
  return out;
}

double value_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::BF16 ? bf16_to_float(t.bf16()[i]) : t.f32()[i];
}

}  // namespace transduce::testing
