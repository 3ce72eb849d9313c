#include "model/dropout.h"

#include "ops/ops.h"

namespace transduce {

Tensor Dropout::forward(Context& ctx, const Tensor& x) {
  active_ = ctx.training && p_ > 0.0f;
  if (!active_) return x;
  Tensor y = ctx.alloc(x.shape());
  mask_ = ctx.alloc(x.shape(), DType::U8);
  ops::dropout_forward(x, y, mask_, p_, ctx.seed, ctx.next_stream());
  return y;
}

Tensor Dropout::forward_add(Context& ctx, const Tensor& residual, const Tensor& x) {
  active_ = ctx.training && p_ > 0.0f;
  if (!active_) {
    ops::add(residual, x, x);
    return x;
  }
  mask_ = ctx.alloc(x.shape(), DType::U8);
  ops::dropout_add(residual, x, x, mask_, p_, ctx.seed, ctx.next_stream());
  return x;
}

Tensor Dropout::backward(Context& ctx, const Tensor& dy) {
  if (!active_) return dy;
  Tensor dx = ctx.alloc(dy.shape());
  ops::dropout_backward(dy, mask_, p_, dx);
  return dx;
}

Tensor WordDropout::forward(Context& ctx, const Tensor& x) {
  active_ = ctx.training && p_ > 0.0f;
  if (!active_) return x;
  Tensor y = ctx.alloc(x.shape());
  mask_ = ctx.alloc({x.numel() / x.dim(-1)}, DType::U8);
  ops::word_dropout_forward(x, y, mask_, p_, ctx.seed, ctx.next_stream());
  return y;
}

Tensor WordDropout::backward(Context& ctx, const Tensor& dy) {
  if (!active_) return dy;
  Tensor dx = ctx.alloc(dy.shape());
  ops::word_dropout_backward(dy, mask_, p_, dx);
  return dx;
}

}  // namespace transduce
