#include "model/feed_forward.h"

#include "ops/ops.h"

namespace transduce {

FeedForward::FeedForward(const std::string& name, const ModelConfig& c)
    : fc1(name + ".fc1", c.d_model, c.d_ff),
      fc2(name + ".fc2", c.d_ff, c.d_model),
      relu_dropout_(c.relu_dropout) {}

void FeedForward::collect(ParamList& out) {
  fc1.collect(out);
  fc2.collect(out);
}

Tensor FeedForward::forward(Context& ctx, const Tensor& x) {
  if (fc2.weight.bf16.defined() && !(ctx.training && relu_dropout_.p() > 0.0f)) {
    // A bf16 model's hidden layer is fc2's bf16 operand and, for backward, the ReLU's mask (a
    // bf16 number is above zero when its fp32 value is, but for values up to 2^-134, which round
    // to zero): kept in bf16 alone, written so by fc1's product. ReLU dropout needs the ReLU's
    // own output, so it keeps the fp32 path.
    hidden_ = fc1.forward_relu(ctx, x, DType::BF16);
    return fc2.forward(ctx, relu_dropout_.forward(ctx, hidden_));  // inactive: hidden_ itself
  }
  hidden_ = fc1.forward_relu(ctx, x);
  return fc2.forward(ctx, relu_dropout_.forward(ctx, hidden_));
}

Tensor FeedForward::backward(Context& ctx, const Tensor& dy, const Tensor& dx_into) {
  Tensor dhidden = relu_dropout_.backward(ctx, fc2.backward(ctx, dy));
  return fc1.backward(ctx, dhidden, dx_into, hidden_);  // through the ReLU
}

}  // namespace transduce
