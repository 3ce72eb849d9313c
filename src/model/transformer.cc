#include "model/transformer.h"

#include "model/linear.h"

#include <cmath>
#include <cstring>
#include <tuple>

#include "core/error.h"
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

void Transformer::set_precision(Precision p) {
  require_precision(p);
  if (precision_ == Precision::INT8 && p != Precision::INT8)
    fail("an int8 model has no fp32 weights left to compute in {}: load it again",
         precision_name(p));
  if (precision_ == Precision::INT8) return;
  precision_ = p;
  for (Param* param : params_) {
    if (!param->gemm_weight) continue;
    if (p == Precision::BF16) {
      if (!param->bf16.defined()) param->bf16 = Tensor::empty(param->value.shape(), DType::BF16);
      ops::to_bf16(param->value, param->bf16);
      continue;
    }
    param->bf16 = Tensor();
    if (p == Precision::INT8) {
      // Weights read already quantized (io::load_weights) are packed as they are.
      if (!param->int8.q.defined())
        param->int8 = ops::quantize_matrix(param->value);
      else if (!param->int8.packed)
        ops::pack_int8(param->int8);
      // The embedding's lookups still read its fp32 rows (V x d_model floats, a few MB); every
      // other GEMM weight is read only through its int8 copy from now on.
      if (param != &embedding.weight) param->value = Tensor();
    }
  }
}

void Transformer::release_gradients() {
  for (Param* p : params_) p->grad = Tensor();
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
  // The decoder's output is only the projection's operand (forward and backward): a bf16 model
  // rounds it once for both.
  dec_out_ = gemm_operand(ctx,
                          decoder.forward(ctx, embed(ctx, tgt_in, tgt_positions, tgt_dropout_),
                                          tgt_pad, memory, src_pad),
                          embedding.weight.bf16.defined());
  return embedding.project(ctx, dec_out_);
}

DecoderCache Transformer::start_decoding(Context& ctx, const Tensor& memory, const Tensor& src_pad,
                                         int64_t capacity, int64_t repeat) {
  if (capacity > config_.max_positions)
    fail("decoding {} positions is past the model's {} positions", capacity, config_.max_positions);
  DecoderCache cache;
  cache.capacity = capacity;
  cache.group = repeat;
  cache.src_pad = ctx.alloc(src_pad.shape(), DType::U8);  // select() compacts it in place
  cache.src_pad.copy_from(src_pad);
  const int64_t n = memory.dim(0) * repeat, hk = int64_t{config_.heads} * config_.d_k,
                hv = int64_t{config_.heads} * config_.d_v;
  for (auto& layer : decoder.layers) {
    LayerCache c;
    for (int i = 0; i < 2; ++i) {
      c.key_buffers[i] = ctx.alloc({n, capacity, hk});
      c.value_buffers[i] = ctx.alloc({n, capacity, hv});
    }
    c.self_keys = c.key_buffers[0];
    c.self_values = c.value_buffers[0];
    // Once per sentence, whatever `repeat` is (see kv_cache.h).
    std::tie(c.cross_keys, c.cross_values) = layer->cross_attn.keys_values(ctx, memory);
    cache.layers.push_back(std::move(c));
  }
  return cache;
}

Tensor Transformer::decode_step(Context& ctx, const Tensor& tokens, DecoderCache& cache) {
  if (cache.length >= cache.capacity)
    fail("decoding past the {} positions the cache was made for", cache.capacity);
  const int64_t n = tokens.numel();
  Tensor x = embedding.lookup(ctx, tokens.reshape({n, 1}));
  tgt_positions.add(x, cache.length);
  Tensor h = decoder.step(ctx, x, cache);
  ++cache.length;
  return embedding.project(ctx, h).reshape({n, config_.vocab_size});
}

void Transformer::forward_to_logits(Context& ctx, const Batch& batch) {
  batch_ = batch;
  src_pad_ = padding_mask(ctx, batch.src);
  tgt_pad_ = padding_mask(ctx, batch.tgt_in);
  memory_ = encode(ctx, batch.src, src_pad_);
  logits_ = decode(ctx, batch.tgt_in, tgt_pad_, memory_, src_pad_);
}

ops::CrossEntropySums Transformer::forward(Context& ctx, const Batch& batch) {
  forward_to_logits(ctx, batch);
  lse_ = ctx.alloc({logits_.rows()});
  return ops::cross_entropy_forward(logits_, batch.tgt_out, config_.pad_id, config_.label_smoothing,
                                    lse_);
}

// A bf16 model's output projection reads the loss's gradient in bf16: written so at once.
Tensor Transformer::bf16_logits_gradient(Context& ctx) const {
  return embedding.weight.bf16.defined() ? ctx.alloc(logits_.shape(), DType::BF16) : Tensor();
}

void Transformer::backward(Context& ctx, float grad_scale) {
  const Tensor dlogits_bf16 = bf16_logits_gradient(ctx);
  ops::cross_entropy_backward(logits_, batch_.tgt_out, config_.pad_id, config_.label_smoothing,
                              lse_, grad_scale, dlogits_bf16);
  backward_from_logits(ctx, dlogits_bf16);
}

ops::CrossEntropySums Transformer::train_step(Context& ctx, const Batch& batch, float grad_scale) {
  forward_to_logits(ctx, batch);
  const Tensor dlogits_bf16 = bf16_logits_gradient(ctx);
  const ops::CrossEntropySums sums = ops::cross_entropy_train(
      logits_, batch.tgt_out, config_.pad_id, config_.label_smoothing, grad_scale, dlogits_bf16);
  backward_from_logits(ctx, dlogits_bf16);
  return sums;
}

void Transformer::backward_from_logits(Context& ctx, const Tensor& dlogits_bf16) {
  // The loss wrote its gradient into dlogits_bf16 when defined, else over the logits.
  Tensor ddec =
      embedding.project_backward(ctx, dec_out_, dlogits_bf16.defined() ? dlogits_bf16 : logits_);
  Tensor dmemory = ctx.zeros(memory_.shape());
  Tensor dy = tgt_dropout_.backward(ctx, decoder.backward(ctx, ddec, dmemory));
  tgt_positions.backward(dy);
  embedding.lookup_backward(batch_.tgt_in, dy);
  Tensor dx = src_dropout_.backward(ctx, encoder.backward(ctx, dmemory));
  src_positions.backward(dx);
  embedding.lookup_backward(batch_.src, dx);
}

}  // namespace transduce
