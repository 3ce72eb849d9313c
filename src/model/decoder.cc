#include "model/decoder.h"

#include <fmt/format.h>

#include "ops/ops.h"

namespace transduce {

DecoderLayer::DecoderLayer(const std::string& name, const ModelConfig& c)
    : self_res(name + ".self_attn_norm", c),
      self_attn(name + ".self_attn", c),
      cross_res(name + ".cross_attn_norm", c),
      cross_attn(name + ".cross_attn", c),
      ffn_res(name + ".ffn_norm", c),
      ffn(name + ".ffn", c) {}

Tensor DecoderLayer::forward(Context& ctx, const Tensor& y, const Tensor& tgt_pad,
                             const Tensor& memory, const Tensor& src_pad) {
  Tensor s_in = self_res.enter(ctx, y);
  Tensor h1 = self_res.leave(ctx, y, self_attn.forward(ctx, s_in, s_in, tgt_pad, true));
  Tensor c_in = cross_res.enter(ctx, h1);
  Tensor h2 = cross_res.leave(ctx, h1, cross_attn.forward(ctx, c_in, memory, src_pad, false));
  return ffn_res.leave(ctx, h2, ffn.forward(ctx, ffn_res.enter(ctx, h2)));
}

Tensor DecoderLayer::backward(Context& ctx, const Tensor& dy, const Tensor& dmemory) {
  const Tensor dh2 = ffn_res.backward(
      ctx, dy, [&](const Tensor& d, const Tensor& into) { return ffn.backward(ctx, d, into); });
  const Tensor dh1 = cross_res.backward(ctx, dh2, [&](const Tensor& d, const Tensor& into) {
    return cross_attn.backward(ctx, d, dmemory, into);
  });
  return self_res.backward(ctx, dh1, [&](const Tensor& d, const Tensor& into) {
    return self_attn.backward(ctx, d, {}, into);
  });
}

Tensor DecoderLayer::step(Context& ctx, const Tensor& y, DecoderCache& cache, int64_t layer) {
  const int64_t n = y.dim(0), position = cache.length;
  Tensor s_in = self_res.enter(ctx, y);
  auto [keys, values] = self_attn.keys_values(ctx, s_in);
  ops::store_history(cache.history, layer, position, keys.reshape({n, keys.dim(2)}),
                     values.reshape({n, values.dim(2)}));
  // Every cached position is in the past: no causal mask needed.
  Tensor h1 = self_res.leave(
      ctx, y, self_attn.attend_history(ctx, s_in, cache.history, layer, position + 1));
  // The rows of a sentence's group are its queries over its one copy of the encoder's keys.
  const LayerCache& mine = cache.layers[static_cast<size_t>(layer)];
  Tensor c_in = cross_res.enter(ctx, h1);
  const int64_t sentences = mine.cross_keys.data.dim(0), group = n / sentences;
  Tensor cross =
      cross_attn.attend(ctx, c_in.reshape({sentences, group, c_in.dim(2)}), mine.cross_keys,
                        mine.cross_values, mine.cross_keys.data.dim(1), cache.src_pad, false, 0);
  Tensor h2 = cross_res.leave(ctx, h1, cross.reshape(h1.shape()));
  return ffn_res.leave(ctx, h2, ffn.forward(ctx, ffn_res.enter(ctx, h2)));
}

void DecoderLayer::collect(ParamList& out) {
  self_attn.collect(out);
  self_res.collect(out);
  cross_attn.collect(out);
  cross_res.collect(out);
  ffn.collect(out);
  ffn_res.collect(out);
}

Decoder::Decoder(const ModelConfig& c) {
  for (int i = 0; i < c.layers; ++i)
    layers.push_back(std::make_unique<DecoderLayer>(fmt::format("decoder.layers.{}", i), c));
  if (c.norm == NormPlacement::Pre)
    final_norm = std::make_unique<LayerNorm>("decoder.final_norm", c.d_model, c.layer_norm_eps);
}

Tensor Decoder::forward(Context& ctx, const Tensor& y, const Tensor& tgt_pad, const Tensor& memory,
                        const Tensor& src_pad) {
  Tensor h = y;
  for (auto& layer : layers) h = layer->forward(ctx, h, tgt_pad, memory, src_pad);
  return final_norm ? final_norm->forward(ctx, h) : h;
}

Tensor Decoder::backward(Context& ctx, const Tensor& dy, const Tensor& dmemory) {
  Tensor d = final_norm ? final_norm->backward(ctx, dy) : dy;
  // A layer's backward temporaries are given back when it is done: only its input's gradient
  // (and what it adds into dmemory, allocated before) outlives it.
  for (auto it = layers.rbegin(); it != layers.rend(); ++it)
    d = keep_only_result(ctx, [&] { return (*it)->backward(ctx, d, dmemory); });
  return d;
}

Tensor Decoder::step(Context& ctx, const Tensor& y, DecoderCache& cache) {
  cache.begin_position();
  Tensor h = y;
  for (size_t i = 0; i < layers.size(); ++i)
    h = keep_result_only(ctx,
                         [&] { return layers[i]->step(ctx, h, cache, static_cast<int64_t>(i)); });
  return final_norm ? final_norm->forward(ctx, h) : h;
}

void Decoder::collect(ParamList& out) {
  for (auto& layer : layers) layer->collect(out);
  if (final_norm) final_norm->collect(out);
}

}  // namespace transduce
