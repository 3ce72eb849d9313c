// What a forward/backward pass needs besides weights: where activations live, and dropout state.
#pragma once

#include <cstdint>

#include "core/arena.h"

namespace transduce {

struct Context {
  explicit Context(Arena& a, bool train = false, uint64_t dropout_seed = 0)
      : arena(a), training(train), seed(dropout_seed) {}

  Tensor alloc(const Shape& shape, DType dtype = DType::F32) { return arena.alloc(shape, dtype); }
  Tensor zeros(const Shape& shape, DType dtype = DType::F32) { return arena.zeros(shape, dtype); }
  // A fresh random stream for each dropout application within a step.
  uint64_t next_stream() { return stream++; }

  Arena& arena;
  bool training;
  uint64_t seed;
  uint64_t stream = 0;
};

}  // namespace transduce
