// A layer's product x w^T + bias in double, and the check that a library's fp32 (or bf16-output)
// result lies within the rounding bound of fp32 sums: for the tests of ops::linear_product and
// ops::linear_packed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace transduce::testing {

// x w^T + bias (bias may be undefined) in double, and the magnitudes the fp32 sums' rounding
// scales with. x and w F32 or BF16 (read exactly).
struct ExactProduct {
  std::vector<double> y, magnitude;
};
ExactProduct exact_product(const Tensor& x, const Tensor& w, const Tensor& bias);

// Each output within the fp32 sums' bound gamma_{k+2} of the exact value (after the ReLU when
// `relu`), plus half a bf16 step of it when the output is bf16; and with the ReLU, exactly 0
// wherever the exact value is below minus that bound, never negative.
void expect_close_to_exact(const Tensor& got, const ExactProduct& want, int64_t k, bool relu,
                           const std::string& what);

}  // namespace transduce::testing
