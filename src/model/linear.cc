#include "model/linear.h"

#include "ops/ops.h"

namespace transduce {

Linear::Linear(const std::string& name, int64_t in, int64_t out)
    : weight(name + ".weight", {out, in}), bias(name + ".bias", {out}) {}

Tensor Linear::forward(Context& ctx, const Tensor& x) {
  x_ = x;
  Shape shape = x.shape();
  shape[shape.ndim() - 1] = out_features();
  Tensor y = ctx.alloc(shape);
  ops::fill_rows(y, bias.value);
  ops::gemm(x, false, weight.value, true, y, 1.0f, 1.0f);
  return y;
}

Tensor Linear::backward(Context& ctx, const Tensor& dy, const Tensor& dx_into) {
  ops::gemm(dy, true, x_, false, weight.grad, 1.0f, 1.0f);
  ops::bias_grad(dy, bias.grad);
  if (dx_into.defined()) {
    ops::gemm(dy, false, weight.value, false, dx_into, 1.0f, 1.0f);
    return dx_into;
  }
  Tensor dx = ctx.alloc(x_.shape());
  ops::gemm(dy, false, weight.value, false, dx);
  return dx;
}

}  // namespace transduce
