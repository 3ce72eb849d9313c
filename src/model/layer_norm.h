// Layer normalisation over the model dimension, with a learned gain and bias.
#pragma once

#include "model/context.h"
#include "model/param.h"

namespace transduce {

class LayerNorm {
 public:
  LayerNorm(const std::string& name, int64_t dim, float eps);
  Tensor forward(Context& ctx, const Tensor& x);
  Tensor backward(Context& ctx, const Tensor& dy);
  void collect(ParamList& out) {
    out.push_back(&gamma);
    out.push_back(&beta);
  }

  Param gamma, beta;  // stored as "<name>.weight" and "<name>.bias"

 private:
  float eps_;
  Tensor x_, mean_, rstd_;
};

}  // namespace transduce
