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

Tensor Linear::gemm_input(Context& ctx, const Tensor& x) const {
  return gemm_operand(ctx, x, weight.bf16.defined());
}

Tensor Linear::forward(Context& ctx, const Tensor& x) {
  const PhaseScope phase(Phase::kProducts);
  Shape shape = x.shape();
  shape[shape.ndim() - 1] = out_features();
  Tensor y = ctx.alloc(shape);
  if (weight.int8.defined()) {
    TD_CHECK(ctx.inference, "an int8 model only translates: {} has no fp32 weights to train",
             weight.name);
    ops::gemm_int8(x, weight.int8, bias.value, y);
    return y;
  }
  const bool bf16 = weight.bf16.defined();
  // Backward needs x only as a GEMM operand: a bf16 model keeps it in bf16, half the memory.
  x_ = gemm_operand(ctx, x, bf16);
  ops::fill_rows(y, bias.value);
  ops::gemm(x_, false, bf16 ? weight.bf16 : weight.value, true, y, 1.0f, 1.0f);
  return y;
}

Tensor Linear::backward(Context& ctx, const Tensor& dy, const Tensor& dx_into) {
  const bool bf16 = weight.bf16.defined();
  const Tensor dy_op = gemm_operand(ctx, dy, bf16);
  const Tensor& w = bf16 ? weight.bf16 : weight.value;
  ops::gemm(dy_op, true, x_, false, weight.grad, 1.0f, 1.0f);
  ops::bias_grad(dy, bias.grad);
  if (dx_into.defined()) {
    ops::gemm(dy_op, false, w, false, dx_into, 1.0f, 1.0f);
    return dx_into;
  }
  Tensor dx = ctx.alloc(x_.shape());
  ops::gemm(dy_op, false, w, false, dx);
  return dx;
}

}  // namespace transduce
