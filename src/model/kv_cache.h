// What incremental decoding keeps between steps: each decoder layer's self-attention keys and
// values so far, and its cross-attention keys and values of the encoder output, computed once.
//
// The self-attention keys and values of all layers are one position-major history
// (ops::KvHistory): position t of every row is written once, into slots of its own, and a table
// names each row's slot at each position. When a beam search reorders its rows only that table
// of slot numbers moves; and a batch touches the memory of the positions it reaches, whatever its
// capacity, so that batches of other lengths reuse the same pages.
//
// Rows come in groups of `group` consecutive rows per sentence (the beams of a sentence; 1 for
// greedy search). The cross-attention keys and values and the source mask are kept once per
// sentence, not per row: a beam reorder never copies them, and the decoder attends with the
// group's rows as that sentence's queries.
//
// An int8 model keeps all of them in int8, one scale per head's vector: a quarter of the memory;
// a bf16 model in bf16, half of it.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "ops/ops.h"

namespace transduce {

struct LayerCache {
  ops::HeadVectors cross_keys, cross_values;  // [S, Ls, h*d_k], [S, Ls, h*d_v]
};

struct DecoderCache {
  std::vector<LayerCache> layers;
  ops::KvHistory history;  // the self-attention keys and values of every layer
  Tensor src_pad;          // U8 [S, Ls]
  int64_t group = 1;       // rows per sentence
  int64_t length = 0;      // target positions decoded so far
  int64_t capacity = 0;

  int64_t sentences() const { return src_pad.defined() ? src_pad.dim(0) : 0; }
  int64_t rows() const { return sentences() * group; }
  // Keeps the given rows, in this order (repeats allowed): beam reordering, and finished
  // sentences leaving the batch. Each group of `group` kept rows must come from one sentence.
  void select(const std::vector<int32_t>& rows);
  // Starts position `length`: row r's keys and values go to slot r.
  void begin_position();
  // The first position may be decoded with one row per sentence, since every row of a group
  // starts alike (from BOS): afterwards each row of sentence s reads that position from slot s.
  void share_first_position();
};

}  // namespace transduce
