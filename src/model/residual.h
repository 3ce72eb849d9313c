// The residual connection, dropout and layer norm around a sub-layer (section 3.1, 5.4):
//   post-LN (the paper): out = LayerNorm(x + Dropout(Sublayer(x)))
//   pre-LN (option):     out = x + Dropout(Sublayer(LayerNorm(x)))
// Use: s_in = enter(x); s = sublayer(s_in); out = leave(x, s). Backward in reverse:
// ds = leave_backward(dout); ds_in = sublayer.backward(ds); dx = enter_backward(ds_in), or all
// three at once with backward().
#pragma once

#include "model/config.h"
#include "model/dropout.h"
#include "model/layer_norm.h"

namespace transduce {

class ResidualNorm {
 public:
  ResidualNorm(const std::string& norm_name, const ModelConfig& config);

  Tensor enter(Context& ctx, const Tensor& x);
  Tensor leave(Context& ctx, const Tensor& x, const Tensor& sublayer_out);
  Tensor leave_backward(Context& ctx, const Tensor& dout);
  // `dsublayer_in` is consumed (the residual gradient is added into it), unless it is
  // input_gradient_sink(), which holds the sum already.
  Tensor enter_backward(Context& ctx, const Tensor& dsublayer_in);
  // Backward through the block: `sublayer_backward(ds, dx_into)` returns the sub-layer's input
  // gradient, added into dx_into when that is defined. Post-LN passes the residual path's gradient
  // there, which saves a zeroed buffer and a pass; the sub-layer must read ds before it writes
  // dx_into, as they may be one tensor (when dropout is off).
  template <class SublayerBackward>
  Tensor backward(Context& ctx, const Tensor& dout, SublayerBackward&& sublayer_backward) {
    const Tensor ds = leave_backward(ctx, dout);
    return enter_backward(ctx, sublayer_backward(ds, input_gradient_sink()));
  }
  void collect(ParamList& out) { norm.collect(out); }

  LayerNorm norm;

 private:
  NormPlacement placement_;
  Dropout dropout_;
  Tensor dresidual_;

  // After leave_backward: where the sub-layer may add its input's gradient (post-LN: the residual
  // path's gradient; pre-LN: none, as a layer norm stands between).
  Tensor input_gradient_sink() const;
};

}  // namespace transduce
