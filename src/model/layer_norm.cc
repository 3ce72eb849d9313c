#include "model/layer_norm.h"

#include "ops/ops.h"

namespace transduce {

LayerNorm::LayerNorm(const std::string& name, int64_t dim, float eps)
    : gamma(name + ".weight", {dim}), beta(name + ".bias", {dim}), eps_(eps) {
  float* g = gamma.value.f32();
  for (int64_t i = 0; i < dim; ++i) g[i] = 1.0f;
}

Tensor LayerNorm::forward(Context& ctx, const Tensor& x) {
  x_ = x;
  mean_ = ctx.alloc({x.rows()});
  rstd_ = ctx.alloc({x.rows()});
  Tensor y = ctx.alloc(x.shape());
  ops::layer_norm_forward(x, gamma.value, beta.value, eps_, y, mean_, rstd_);
  return y;
}

Tensor LayerNorm::backward(Context& ctx, const Tensor& dy) {
  Tensor dx = ctx.alloc(dy.shape());
  ops::layer_norm_backward(dy, x_, gamma.value, mean_, rstd_, dx, gamma.grad, beta.grad);
  return dx;
}

}  // namespace transduce
