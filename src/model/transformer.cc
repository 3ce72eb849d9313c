#include "model/transformer.h"

#include <cmath>
#include <cstring>

#include "core/rng.h"

namespace transduce {

Transformer::Transformer(const ModelConfig& c)
    : embedding(c.vocab_size, c.d_model),
      src_positions("encoder.positions", c),
      tgt_positions("decoder.positions", c),
      encoder(c),
      decoder(c),
      config_(c),
      src_dropout_(c.dropout),
      tgt_dropout_(c.dropout) {
  c.validate();
  embedding.collect(params_);
  src_positions.collect(params_);
  tgt_positions.collect(params_);
  encoder.collect(params_);
  decoder.collect(params_);
}

Param* Transformer::find(const std::string& name) const {
  for (Param* p : params_)
    if (p->name == name) return p;
  return nullptr;
}

void Transformer::init_parameters(uint64_t seed) {
  SplitMix64 rng(seed);
  auto ends_with = [](const std::string& s, const char* suffix) {
    return s.size() >= std::strlen(suffix) &&
           s.compare(s.size() - std::strlen(suffix), std::string::npos, suffix) == 0;
  };
  for (Param* p : params_) {
    float* v = p->value.f32();
    const int64_t n = p->value.numel();
    const bool is_norm = p->name.find("norm") != std::string::npos;
    if (p->name == "embedding.weight" || p->name.find("positions") != std::string::npos) {
      const float std = 1.0f / std::sqrt(static_cast<float>(config_.d_model));
      for (int64_t i = 0; i < n; ++i) v[i] = std * rng.normal();
    } else if (ends_with(p->name, ".bias")) {
      for (int64_t i = 0; i < n; ++i) v[i] = 0.0f;
    } else if (is_norm) {
      for (int64_t i = 0; i < n; ++i) v[i] = 1.0f;
    } else {  // a projection [out, in]
      const float bound = std::sqrt(6.0f / static_cast<float>(p->value.dim(0) + p->value.dim(1)));
      for (int64_t i = 0; i < n; ++i) v[i] = rng.uniform(-bound, bound);
    }
  }
}

void Transformer::zero_grad() {
  for (Param* p : params_) p->grad.fill_zero();
}

Tensor Transformer::padding_mask(Context& ctx, const Tensor& ids) const {
  Tensor mask = ctx.alloc(ids.shape(), DType::U8);
  const int32_t* p = ids.i32();
  uint8_t* m = mask.u8();
  for (int64_t i = 0; i < ids.numel(); ++i) m[i] = p[i] == config_.pad_id;
  return mask;
}

Tensor Transformer::embed(Context& ctx, const Tensor& ids, const PositionalEncoding& positions,
                          Dropout& dropout) {
  Tensor x = embedding.lookup(ctx, ids);
  positions.add(x);
  return dropout.forward(ctx, x);
}

Tensor Transformer::encode(Context& ctx, const Tensor& src, const Tensor& src_pad) {
  return encoder.forward(ctx, embed(ctx, src, src_positions, src_dropout_), src_pad);
}

Tensor Transformer::decode(Context& ctx, const Tensor& tgt_in, const Tensor& tgt_pad,
                           const Tensor& memory, const Tensor& src_pad) {
  dec_out_ = decoder.forward(ctx, embed(ctx, tgt_in, tgt_positions, tgt_dropout_), tgt_pad, memory,
                             src_pad);
  return embedding.project(ctx, dec_out_);
}

ops::CrossEntropySums Transformer::forward(Context& ctx, const Batch& batch) {
  batch_ = batch;
  src_pad_ = padding_mask(ctx, batch.src);
  tgt_pad_ = padding_mask(ctx, batch.tgt_in);
  memory_ = encode(ctx, batch.src, src_pad_);
  logits_ = decode(ctx, batch.tgt_in, tgt_pad_, memory_, src_pad_);
  lse_ = ctx.alloc({logits_.rows()});
  return ops::cross_entropy_forward(logits_, batch.tgt_out, config_.pad_id, config_.label_smoothing,
                                    lse_);
}

void Transformer::backward(Context& ctx, float grad_scale) {
  ops::cross_entropy_backward(logits_, batch_.tgt_out, config_.pad_id, config_.label_smoothing,
                              lse_, grad_scale);
  Tensor ddec = embedding.project_backward(ctx, dec_out_, logits_);
  Tensor dmemory = ctx.zeros(memory_.shape());
  Tensor dy = tgt_dropout_.backward(ctx, decoder.backward(ctx, ddec, dmemory));
  tgt_positions.backward(dy);
  embedding.lookup_backward(batch_.tgt_in, dy);
  Tensor dx = src_dropout_.backward(ctx, encoder.backward(ctx, dmemory));
  src_positions.backward(dx);
  embedding.lookup_backward(batch_.src, dx);
}

}  // namespace transduce
