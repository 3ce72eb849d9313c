// A weight matrix quantized to int8 for inference, one scale per output row.
#pragma once

#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace transduce::ops {

// W [n, k] (n output features, as a Linear layer's weight is stored) ≈ scales[r] * q[r, :], with
// q in [-127, 127] and scales[r] = max_j |W[r, j]| / 127 (0 for a row of zeros).
struct Int8Matrix {
  Tensor q;       // I8 [n, k]; a translating model releases it once packed (only `packed` is read)
  Tensor scales;  // F32 [n]
  // q in the blocked layout oneDNN's product reads, or widened to int16 on a CPU without int8
  // dot-product instructions (ops::pack_int8); opaque outside ops/cpu.
  std::shared_ptr<const void> packed;
  int64_t packed_cols = 0;  // k, for when q is released

  bool defined() const { return q.defined() || packed != nullptr; }
  int64_t rows() const { return scales.numel(); }
  int64_t cols() const { return q.defined() ? q.dim(1) : packed_cols; }
};

}  // namespace transduce::ops
