// A bf16 model's activation that is kept only as the next product's bf16 operand: computed in
// fp32, rounded into a BF16 tensor allocated first, and the fp32 values given back to the arena
// at once, so that backward holds 2 bytes an element instead of 6.
#pragma once

#include "core/shape.h"
#include "model/context.h"
#include "ops/ops.h"

namespace transduce {

// compute(ctx) returns the fp32 values (allocating them in ctx), rounded into the BF16 tensor of
// `shape` that is returned. Whatever compute() must keep for backward has to be allocated before
// the call.
template <class Compute>
Tensor kept_as_bf16(Context& ctx, const Shape& shape, Compute&& compute) {
  const Tensor operand = ctx.alloc(shape, DType::BF16);
  const Arena::Mark mark = ctx.arena.mark();
  ops::to_bf16(compute(ctx), operand);
  ctx.arena.release(mark);
  return operand;
}

}  // namespace transduce
