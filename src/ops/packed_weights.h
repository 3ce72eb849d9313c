// A weight matrix copied once into the blocked layout oneDNN's product reads, for inference. A
// product with plain weights packs them again at every call (OpenBLAS and oneDNN alike), which at
// a decoder step's few hundred rows costs a third or more of the product.
#pragma once

#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace transduce::ops {

// W [n, k] (n output features, as a Linear layer's weight is stored), F32 or BF16, packed by
// ops::pack_weights; read by ops::linear_packed.
struct PackedWeights {
  std::shared_ptr<const void> memory;  // a dnnl::memory; opaque outside ops/cpu
  DType dtype = DType::F32;
  int64_t rows = 0, cols = 0;

  bool defined() const { return memory != nullptr; }
};

}  // namespace transduce::ops
