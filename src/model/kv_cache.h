// What incremental decoding keeps between steps: each decoder layer's self-attention keys and
// values so far, and its cross-attention keys and values of the encoder output, computed once.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace transduce {

struct LayerCache {
  Tensor self_keys, self_values;    // [N, capacity, h*d_k], [N, capacity, h*d_v]
  Tensor cross_keys, cross_values;  // [N, Ls, h*d_k], [N, Ls, h*d_v]
};

struct DecoderCache {
  std::vector<LayerCache> layers;
  Tensor src_pad;      // U8 [N, Ls]
  int64_t length = 0;  // target positions decoded so far
  int64_t capacity = 0;

  int64_t rows() const { return src_pad.defined() ? src_pad.dim(0) : 0; }
  // Keeps the given rows, in this order (repeats allowed): beam reordering, and finished
  // sentences leaving the batch.
  void select(const std::vector<int32_t>& rows);
};

}  // namespace transduce
