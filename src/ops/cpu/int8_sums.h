// Exact int8 products without int8 dot-product instructions: what gemm_int8 runs where oneDNN
// would use AVX2's vpmaddubsw, whose 16-bit pair sums saturate.
#pragma once

#include <cstdint>

namespace transduce::ops {

// sums [rows, n] = x [rows, k] w^T in int32 for row-major x and w [n, k] holding int8 values
// (-128..127) widened to int16, which the compiler multiplies a vector at a time; exact for
// k < 2^17. On `threads` threads.
void int8_sums(const int16_t* x, int64_t rows, const int16_t* w, int64_t n, int64_t k,
               int32_t* sums, int threads);

}  // namespace transduce::ops
