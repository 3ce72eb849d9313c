// What a forward/backward pass needs besides weights: where activations live, and dropout state.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/arena.h"

namespace transduce {

class AttentionRecorder;

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
  // Set by decoding: no backward will run, so a layer's intermediates may be given back.
  bool inference = false;
  // Set to see the attention weights inference computes (model/attention_recorder.h).
  AttentionRecorder* attention = nullptr;
};

// Runs f() and gives back everything it allocated except its result, which moves to where f's
// allocations began (memory f's result shares with what was allocated before stays put).
template <class F>
Tensor keep_only_result(Context& ctx, F&& f) {
  const Arena::Mark start = ctx.arena.mark();
  const Tensor out = f();
  ctx.arena.release(start);
  Tensor kept = ctx.alloc(out.shape(), out.dtype());
  // Host memory (decoding runs on the CPU); the two may overlap.
  if (kept.raw() != out.raw()) std::memmove(kept.raw(), out.raw(), out.nbytes());
  return kept;
}

// Under ctx.inference, keep_only_result: keeps a deep stack of layers at one layer's activations.
template <class F>
Tensor keep_result_only(Context& ctx, F&& f) {
  if (!ctx.inference) return f();
  return keep_only_result(ctx, std::forward<F>(f));
}

}  // namespace transduce
