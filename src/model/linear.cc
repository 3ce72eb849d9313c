#include "model/linear.h"

#include "core/error.h"
#include "core/phase_clock.h"
#include "ops/ops.h"

namespace transduce {

Linear::Linear(const std::string& name, int64_t in, int64_t out)
    : weight(name + ".weight", {out, in}), bias(name + ".bias", {out}), in_(in), out_(out) {
  weight.gemm_weight = true;
}

Tensor gemm_operand(Context& ctx, const Tensor& t, bool bf16) {
  if (!bf16 || t.dtype() == DType::BF16) return t;
  Tensor low = ctx.alloc(t.shape(), DType::BF16);
  ops::to_bf16(t, low);
  return low;
}

Shape Linear::output_shape(const Tensor& x) const {
  Shape shape = x.shape();
  shape[shape.ndim() - 1] = out_features();
  return shape;
}

Tensor Linear::gemm_input(Context& ctx, const Tensor& x) const {
  return gemm_operand(ctx, x, weight.bf16.defined());
}

Tensor Linear::forward(Context& ctx, const Tensor& x) {
  return product(ctx, x, false, DType::F32);
}

Tensor Linear::forward_relu(Context& ctx, const Tensor& x, DType out) {
  return product(ctx, x, true, out);
}

Tensor Linear::product(Context& ctx, const Tensor& x, bool relu, DType out) {
  const PhaseScope phase(Phase::kProducts);
  Tensor y = ctx.alloc(output_shape(x), out);
  if (weight.int8.defined()) {
    TD_CHECK(ctx.inference, "an int8 model only translates: {} has no fp32 weights to train",
             weight.name);
    TD_CHECK(out == DType::F32, "{}: an int8 product writes F32", weight.name);
    ops::gemm_int8(x, weight.int8, bias.value, y);
    if (relu) ops::relu_forward(y, y);
    return y;
  }
  const bool bf16 = weight.bf16.defined();
  TD_CHECK(out == DType::F32 || bf16, "{} has no bf16 weights for a product into BF16",
           weight.name);
  if (ctx.inference && weight.packed.defined()) {
    ops::linear_packed(gemm_operand(ctx, x, bf16), weight.packed, bias.value, relu, y);
    return y;
  }
  // Backward needs x only as a GEMM operand: a bf16 model keeps it in bf16, half the memory.
  x_ = gemm_operand(ctx, x, bf16);
  ops::linear_product(x_, bf16 ? weight.bf16 : weight.value, bias.value, relu, y);
  return y;
}

Tensor Linear::backward(Context& ctx, const Tensor& dy, const Tensor& dx_into,
                        const Tensor& relu_out) {
  const bool bf16 = weight.bf16.defined();
  Tensor dy_op = dy;
  if (bf16 && dy.dtype() == DType::F32) {  // one pass: the ReLU, db, and the bf16 operand
    dy_op = ctx.alloc(dy.shape(), DType::BF16);
    ops::bias_grad(dy, bias.grad, dy_op, relu_out);
  } else {
    if (relu_out.defined()) ops::relu_backward(relu_out, dy, dy);
    ops::bias_grad(dy, bias.grad);
  }
  const Tensor& w = bf16 ? weight.bf16 : weight.value;
  ops::gemm(dy_op, true, x_, false, weight.grad, 1.0f, 1.0f);
  if (dx_into.defined()) {
    ops::gemm(dy_op, false, w, false, dx_into, 1.0f, 1.0f);
    return dx_into;
  }
  Tensor dx = ctx.alloc(x_.shape());
  ops::gemm(dy_op, false, w, false, dx);
  return dx;
}

}  // namespace transduce
