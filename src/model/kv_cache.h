// What incremental decoding keeps between steps: each decoder layer's self-attention keys and
// values so far, and its cross-attention keys and values of the encoder output, computed once.
//
// Rows come in groups of `group` consecutive rows per sentence (the beams of a sentence; 1 for
// greedy search). The cross-attention keys and values and the source mask are kept once per
// sentence, not per row: a beam reorder never copies them, and the decoder attends with the
// group's rows as that sentence's queries.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace transduce {

struct LayerCache {
  // [N, capacity, h*d_k], [N, capacity, h*d_v]: the first N rows of key_buffers[current] and
  // value_buffers[current]. select() gathers into the other buffer of each pair (no allocation).
  Tensor self_keys, self_values;
  Tensor key_buffers[2], value_buffers[2];
  int current = 0;
  Tensor cross_keys, cross_values;  // [S, Ls, h*d_k], [S, Ls, h*d_v]
};

struct DecoderCache {
  std::vector<LayerCache> layers;
  Tensor src_pad;      // U8 [S, Ls]
  int64_t group = 1;   // rows per sentence
  int64_t length = 0;  // target positions decoded so far
  int64_t capacity = 0;

  int64_t sentences() const { return src_pad.defined() ? src_pad.dim(0) : 0; }
  int64_t rows() const { return sentences() * group; }
  // Keeps the given rows, in this order (repeats allowed): beam reordering, and finished
  // sentences leaving the batch. Each group of `group` kept rows must come from one sentence.
  void select(const std::vector<int32_t>& rows);
};

}  // namespace transduce
