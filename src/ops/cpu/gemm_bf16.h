// The BF16 branch of ops::gemm (oneDNN's matmul), called by gemm() after its shape checks.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace transduce::ops {

void gemm_bf16(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c,
               int64_t m, int64_t n, int64_t k, float alpha, float beta);

// linear_product's BF16 branch: y = x w^T + bias (then ReLU), y F32 or BF16.
void linear_product_bf16(const Tensor& x, const Tensor& w, const Tensor& bias, bool relu,
                         const Tensor& y);

// What gemm_bf16 does on a CPU without bf16 instructions: A and B widened to fp32 (exactly), then
// OpenBLAS's sgemm. Callable on any CPU, so that tests reach it everywhere.
void gemm_bf16_widened(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
                       const Tensor& c, int64_t m, int64_t n, int64_t k, float alpha, float beta);

}  // namespace transduce::ops
