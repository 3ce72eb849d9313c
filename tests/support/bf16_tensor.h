// BF16 tensors in tests: rounding an F32 tensor, and reading an element of either type.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace transduce::testing {

// t (F32) rounded to bf16, nearest and ties to even (ops::to_bf16).
Tensor bf16_of(const Tensor& t);
// Element i of an F32 or BF16 tensor, as a double.
double value_at(const Tensor& t, int64_t i);

}  // namespace transduce::testing
