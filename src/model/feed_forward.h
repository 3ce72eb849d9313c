// The position-wise feed-forward network FFN(x) = max(0, x W1 + b1) W2 + b2 (equation 2).
#pragma once

#include "model/config.h"
#include "model/dropout.h"
#include "model/linear.h"

namespace transduce {

class FeedForward {
 public:
  FeedForward(const std::string& name, const ModelConfig& config);
  Tensor forward(Context& ctx, const Tensor& x);
  // Returns dx, or adds it into `dx_into` (and returns that) when given; dy is read before dx_into
  // is written, so they may be one tensor.
  Tensor backward(Context& ctx, const Tensor& dy, const Tensor& dx_into = {});
  void collect(ParamList& out);

  Linear fc1, fc2;

 private:
  Dropout relu_dropout_;
  Tensor hidden_;  // after the ReLU: F32, or a bf16 model's BF16 (before ReLU dropout, if any)
};

}  // namespace transduce
