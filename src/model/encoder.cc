#include "model/encoder.h"

#include <fmt/format.h>

namespace transduce {

EncoderLayer::EncoderLayer(const std::string& name, const ModelConfig& c)
    : attn_res(name + ".self_attn_norm", c),
      self_attn(name + ".self_attn", c),
      ffn_res(name + ".ffn_norm", c),
      ffn(name + ".ffn", c) {}

Tensor EncoderLayer::forward(Context& ctx, const Tensor& x, const Tensor& src_pad) {
  Tensor a_in = attn_res.enter(ctx, x);
  Tensor h = attn_res.leave(ctx, x, self_attn.forward(ctx, a_in, a_in, src_pad, false));
  return ffn_res.leave(ctx, h, ffn.forward(ctx, ffn_res.enter(ctx, h)));
}

Tensor EncoderLayer::backward(Context& ctx, const Tensor& dy) {
  const Tensor dh = ffn_res.backward(
      ctx, dy, [&](const Tensor& d, const Tensor& into) { return ffn.backward(ctx, d, into); });
  return attn_res.backward(ctx, dh, [&](const Tensor& d, const Tensor& into) {
    return self_attn.backward(ctx, d, {}, into);
  });
}

void EncoderLayer::collect(ParamList& out) {
  self_attn.collect(out);
  attn_res.collect(out);
  ffn.collect(out);
  ffn_res.collect(out);
}

Encoder::Encoder(const ModelConfig& c) {
  for (int i = 0; i < c.layers; ++i)
    layers.push_back(std::make_unique<EncoderLayer>(fmt::format("encoder.layers.{}", i), c));
  if (c.norm == NormPlacement::Pre)
    final_norm = std::make_unique<LayerNorm>("encoder.final_norm", c.d_model, c.layer_norm_eps);
}

Tensor Encoder::forward(Context& ctx, const Tensor& x, const Tensor& src_pad) {
  Tensor h = x;
  for (auto& layer : layers)
    h = keep_result_only(ctx, [&] { return layer->forward(ctx, h, src_pad); });
  return final_norm ? final_norm->forward(ctx, h) : h;
}

Tensor Encoder::backward(Context& ctx, const Tensor& dy) {
  Tensor d = final_norm ? final_norm->backward(ctx, dy) : dy;
  // A layer's backward temporaries are given back when it is done: only its input's gradient
  // outlives it.
  for (auto it = layers.rbegin(); it != layers.rend(); ++it)
    d = keep_only_result(ctx, [&] { return (*it)->backward(ctx, d); });
  return d;
}

void Encoder::collect(ParamList& out) {
  for (auto& layer : layers) layer->collect(out);
  if (final_norm) final_norm->collect(out);
}

}  // namespace transduce
