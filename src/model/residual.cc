#include "model/residual.h"

#include "ops/ops.h"

namespace transduce {

ResidualNorm::ResidualNorm(const std::string& norm_name, const ModelConfig& c)
    : norm(norm_name, c.d_model, c.layer_norm_eps), placement_(c.norm), dropout_(c.dropout) {}

Tensor ResidualNorm::enter(Context& ctx, const Tensor& x) {
  return placement_ == NormPlacement::Pre ? norm.forward(ctx, x) : x;
}

Tensor ResidualNorm::leave(Context& ctx, const Tensor& x, const Tensor& sublayer_out) {
  Tensor sum = dropout_.forward_add(ctx, x, sublayer_out);
  return placement_ == NormPlacement::Post ? norm.forward(ctx, sum) : sum;
}

Tensor ResidualNorm::leave_backward(Context& ctx, const Tensor& dout) {
  dresidual_ = placement_ == NormPlacement::Post ? norm.backward(ctx, dout) : dout;
  return dropout_.backward(ctx, dresidual_);
}

Tensor ResidualNorm::input_gradient_sink() const {
  return placement_ == NormPlacement::Post ? dresidual_ : Tensor();
}

Tensor ResidualNorm::enter_backward(Context& ctx, const Tensor& dsublayer_in) {
  if (placement_ == NormPlacement::Post && dsublayer_in.raw() == dresidual_.raw())
    return dsublayer_in;
  Tensor dx = placement_ == NormPlacement::Pre ? norm.backward(ctx, dsublayer_in) : dsublayer_in;
  ops::axpy(1.0f, dresidual_, dx);
  return dx;
}

}  // namespace transduce
