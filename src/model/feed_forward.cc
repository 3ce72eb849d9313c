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
  hidden_ = fc1.forward(ctx, x);
  ops::relu_forward(hidden_, hidden_);
  return fc2.forward(ctx, relu_dropout_.forward(ctx, hidden_));
}

Tensor FeedForward::backward(Context& ctx, const Tensor& dy, const Tensor& dx_into) {
  Tensor dhidden = relu_dropout_.backward(ctx, fc2.backward(ctx, dy));
  ops::relu_backward(hidden_, dhidden, dhidden);
  return fc1.backward(ctx, dhidden, dx_into);
}

}  // namespace transduce
