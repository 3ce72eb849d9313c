#include "model/transformer.h"

#include "model/linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "core/error.h"
#include "core/rng.h"

namespace transduce {

namespace {
// How many source tokens translation encodes at a time (Transformer::encode): enough rows for
// the products to run at full speed.
constexpr int64_t kEncodeTokens = 512;
}  // namespace

Transformer::Transformer(const ModelConfig& c)
    : embedding(c.vocab_size, c.d_model),
      src_positions("encoder.positions", c),
      tgt_positions("decoder.positions", c),
      encoder(c),
      decoder(c),
      config_(c),
      src_word_dropout_(c.src_word_dropout),
      tgt_word_dropout_(c.tgt_word_dropout),
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
  if (precision_ == Precision::INT8 && p != Precision::INT8)
    fail("an int8 model has no fp32 weights left to compute in {}: load it again",
         precision_name(p));
  for (Param* param : params_) param->packed = {};
  if (p == Precision::INT8) {
    quantize_int8();
    for (Param* param : params_) {
      if (!param->gemm_weight || param->int8.packed) continue;
      ops::pack_int8(param->int8);
      // Products read only the packed copy; the embedding's lookups read its rows.
      if (param != &embedding.weight) param->int8.q = Tensor();
    }
    return;
  }
  precision_ = p;
  for (Param* param : params_) {
    if (!param->gemm_weight) continue;
    if (p == Precision::BF16) {
      if (!param->bf16.defined()) param->bf16 = Tensor::empty(param->value.shape(), DType::BF16);
      ops::to_bf16(param->value, param->bf16);
    } else {
      param->bf16 = Tensor();
    }
  }
}

void Transformer::pack_for_inference() {
  for (Param* param : params_)
    if (param->gemm_weight && !param->int8.defined())
      param->packed = ops::pack_weights(param->bf16.defined() ? param->bf16 : param->value);
}

void Transformer::quantize_int8() {
  precision_ = Precision::INT8;
  for (Param* param : params_) {
    if (!param->gemm_weight) continue;
    param->bf16 = Tensor();
    param->packed = {};  // a copy of the fp32 weights about to go
    if (!param->int8.defined()) param->int8 = ops::quantize_matrix(param->value);
    param->value = Tensor();
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
                          WordDropout& word_dropout, Dropout& dropout) {
  // A dropped word keeps its position.
  Tensor x = word_dropout.forward(ctx, embedding.lookup(ctx, ids));
  positions.add(x);
  return dropout.forward(ctx, x);
}

Tensor Transformer::encode(Context& ctx, const Tensor& src, const Tensor& src_pad) {
  const int64_t batch = src.dim(0), length = src.dim(1);
  // Translation encodes a big batch a few sentences at a time, into one output: sentences do not
  // see each other, and a layer's temporaries for the whole batch (its feed-forward activations
  // alone are d_ff floats a token) would be most of a translation's memory. Attention recording
  // wants one call per layer, and training keeps every layer's activations anyway.
  const int64_t per_part = std::max<int64_t>(1, kEncodeTokens / std::max<int64_t>(length, 1));
  if (!ctx.inference || ctx.attention || batch <= per_part)
    return encoder.forward(ctx, embed(ctx, src, src_positions, src_word_dropout_, src_dropout_),
                           src_pad);
  Tensor memory = ctx.alloc({batch, length, config_.d_model});
  for (int64_t b = 0; b < batch; b += per_part) {
    const int64_t e = std::min(batch, b + per_part);
    const Arena::Mark start = ctx.arena.mark();
    const Tensor part = encoder.forward(
        ctx, embed(ctx, src.slice_rows(b, e), src_positions, src_word_dropout_, src_dropout_),
        src_pad.slice_rows(b, e));
    memory.slice_rows(b, e).copy_from(part);
    ctx.arena.release(start);
  }
  return memory;
}

Tensor Transformer::decode(Context& ctx, const Tensor& tgt_in, const Tensor& tgt_pad,
                           const Tensor& memory, const Tensor& src_pad) {
  dec_out_ = decoder_output(ctx, tgt_in, tgt_pad, memory, src_pad);
  return embedding.project(ctx, dec_out_);
}

Tensor Transformer::decoder_output(Context& ctx, const Tensor& tgt_in, const Tensor& tgt_pad,
                                   const Tensor& memory, const Tensor& src_pad) {
  // The decoder's output is only the projection's operand (forward and backward): a bf16 model
  // rounds it once for both.
  return gemm_operand(
      ctx,
      decoder.forward(ctx, embed(ctx, tgt_in, tgt_positions, tgt_word_dropout_, tgt_dropout_),
                      tgt_pad, memory, src_pad),
      embedding.weight.bf16.defined());
}

DecoderCache Transformer::start_decoding(Context& ctx, Arena& history, const Tensor& memory,
                                         const Tensor& src_pad, int64_t capacity, int64_t repeat) {
  if (capacity > config_.max_positions)
    fail("decoding {} positions is past the model's {} positions", capacity, config_.max_positions);
  DecoderCache cache;
  cache.capacity = capacity;
  cache.group = repeat;
  cache.src_pad = ctx.alloc(src_pad.shape(), DType::U8);  // select() compacts it in place
  cache.src_pad.copy_from(src_pad);
  const int64_t slots = memory.dim(0) * repeat, sentences = memory.dim(0), length = memory.dim(1),
                heads = config_.heads, hk = heads * config_.d_k, hv = heads * config_.d_v;
  // An int8 model keeps keys and values in int8 with a scale per head's vector, a bf16 model in
  // bf16: what its products read, at half of fp32's memory and memory traffic.
  const DType element = precision_ == Precision::INT8   ? DType::I8
                        : precision_ == Precision::BF16 ? DType::BF16
                                                        : DType::F32;
  ops::KvHistory& h = cache.history;
  h.element = element;
  h.heads = heads;
  h.dk = config_.d_k;
  h.dv = config_.d_v;
  // Alone in its arena, the history starts where every batch's did: the pages a batch touches
  // are the ones an earlier batch touched (kv_cache.h).
  history.reset();
  h.rows = history.alloc({capacity, config_.layers, slots,
                          ops::KvHistory::row_bytes(element, heads, config_.d_k, config_.d_v)},
                         DType::U8);
  h.slot_of = ctx.alloc({capacity, slots}, DType::I32);
  auto store = [&](int64_t width) {
    if (element != DType::I8)
      return ops::HeadVectors(ctx.alloc({sentences, length, width}, element));
    return ops::HeadVectors(ctx.alloc({sentences, length, width}, DType::I8),
                            ctx.alloc({sentences, length, heads}));
  };
  for (auto& layer : decoder.layers) {
    LayerCache c;
    // Once per sentence, whatever `repeat` is (see kv_cache.h).
    c.cross_keys = store(hk);
    c.cross_values = store(hv);
    layer->cross_attn.store_keys_values(ctx, memory, c.cross_keys, c.cross_values);
    cache.layers.push_back(std::move(c));
  }
  return cache;
}

Tensor Transformer::decode_step(Context& ctx, const Tensor& tokens, DecoderCache& cache) {
  if (cache.length >= cache.capacity)
    fail("decoding past the {} positions the cache was made for", cache.capacity);
  const int64_t n = tokens.numel();
  // The first step may take one row per sentence for a whole group (kv_cache.h).
  const bool shared_start = cache.length == 0 && cache.group > 1 && n == cache.sentences();
  TD_CHECK(n == cache.rows() || shared_start, "a decoding step of {} tokens for a cache of {} rows",
           n, cache.rows());
  Tensor x = embedding.lookup(ctx, tokens.reshape({n, 1}));
  tgt_positions.add(x, cache.length);
  Tensor h = decoder.step(ctx, x, cache);
  ++cache.length;
  if (shared_start) cache.share_first_position();
  return embedding.project(ctx, h).reshape({n, config_.vocab_size});
}

void Transformer::forward_to_decoder_output(Context& ctx, const Batch& batch) {
  batch_ = batch;
  src_pad_ = padding_mask(ctx, batch.src);
  tgt_pad_ = padding_mask(ctx, batch.tgt_in);
  memory_ = encode(ctx, batch.src, src_pad_);
  dec_out_ = decoder_output(ctx, batch.tgt_in, tgt_pad_, memory_, src_pad_);
  logits_ = Tensor();
}

void Transformer::forward_to_logits(Context& ctx, const Batch& batch) {
  forward_to_decoder_output(ctx, batch);
  logits_ = embedding.project(ctx, dec_out_);
}

Batch repeated_twice(const Batch& batch) {
  auto twice = [](const Tensor& t) {
    TD_CHECK(t.ndim() == 2, "repeated_twice: a batch tensor of shape {}", t.shape().str());
    Tensor out = Tensor::empty({2 * t.dim(0), t.dim(1)}, t.dtype());
    const size_t bytes = t.nbytes();
    std::memcpy(out.raw(), t.raw(), bytes);
    std::memcpy(static_cast<char*>(out.raw()) + bytes, t.raw(), bytes);
    return out;
  };
  return Batch{twice(batch.src), twice(batch.tgt_in), twice(batch.tgt_out)};
}

ops::CrossEntropySums Transformer::forward(Context& ctx, const Batch& batch) {
  forward_to_logits(ctx, batch);
  lse_ = ctx.alloc({logits_.rows()});
  return ops::cross_entropy_forward(logits_, batch.tgt_out, config_.pad_id, config_.label_smoothing,
                                    lse_);
}

// A bf16 model's output projection reads the loss's gradient in bf16: written so at once.
Tensor Transformer::bf16_logits_gradient(Context& ctx, const Tensor& logits) const {
  return embedding.weight.bf16.defined() ? ctx.alloc(logits.shape(), DType::BF16) : Tensor();
}

void Transformer::backward(Context& ctx, float grad_scale) {
  const Tensor dlogits_bf16 = bf16_logits_gradient(ctx, logits_);
  ops::cross_entropy_backward(logits_, batch_.tgt_out, config_.pad_id, config_.label_smoothing,
                              lse_, grad_scale, dlogits_bf16);
  backward_from_logits(ctx, dlogits_bf16);
}

int64_t Transformer::loss_block_rows() const {
  if (loss_block_rows_ > 0) return loss_block_rows_;
  return std::max(kLossBlockMinRows, kLossBlockFloats / std::max(1, config_.vocab_size));
}

ops::CrossEntropySums Transformer::train_step(Context& ctx, const Batch& batch, float grad_scale,
                                              float consistency) {
  if (consistency > 0) {  // R-Drop pairs rows of the two halves: the logits are kept whole
    forward_to_logits(ctx, batch);
    const Tensor dlogits_bf16 = bf16_logits_gradient(ctx, logits_);
    const ops::CrossEntropySums sums =
        ops::consistency_loss_train(logits_, batch.tgt_out, config_.pad_id, config_.label_smoothing,
                                    consistency, grad_scale, dlogits_bf16);
    backward_from_logits(ctx, dlogits_bf16);
    return sums;
  }
  forward_to_decoder_output(ctx, batch);
  // The projection, the loss and the projection's backward a block of rows at a time, each
  // block's logits given back before the next: the whole batch's logits (and their bf16
  // gradient) would be the largest tensors of the step, 910 MB for the base model's benchmark
  // batch of 4,100 target tokens over the paper's 37,000 pieces.
  const int64_t rows = dec_out_.rows(), width = dec_out_.cols();
  const int64_t block = loss_block_rows();
  const Tensor h = dec_out_.reshape({rows, width});
  const Tensor targets = batch.tgt_out.reshape({rows});
  Tensor ddec = ctx.alloc(dec_out_.shape());
  const Tensor dh = ddec.reshape({rows, width});
  ops::CrossEntropySums sums;
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t r1 = std::min(rows, r0 + block);
    const Arena::Mark mark = ctx.arena.mark();
    const Tensor hb = h.slice_rows(r0, r1);
    const Tensor logits = embedding.project(ctx, hb);
    const Tensor dlogits_bf16 = bf16_logits_gradient(ctx, logits);
    sums += ops::cross_entropy_train(logits, targets.slice_rows(r0, r1), config_.pad_id,
                                     config_.label_smoothing, grad_scale, dlogits_bf16);
    embedding.project_backward(ctx, hb, dlogits_bf16.defined() ? dlogits_bf16 : logits,
                               dh.slice_rows(r0, r1));
    ctx.arena.release(mark);
  }
  backward_from_decoder_output(ctx, ddec);
  return sums;
}

void Transformer::backward_from_logits(Context& ctx, const Tensor& dlogits_bf16) {
  // The loss wrote its gradient into dlogits_bf16 when defined, else over the logits.
  backward_from_decoder_output(
      ctx,
      embedding.project_backward(ctx, dec_out_, dlogits_bf16.defined() ? dlogits_bf16 : logits_));
}

void Transformer::backward_from_decoder_output(Context& ctx, const Tensor& ddec) {
  Tensor dmemory = ctx.zeros(memory_.shape());
  Tensor dy = tgt_dropout_.backward(ctx, decoder.backward(ctx, ddec, dmemory));
  tgt_positions.backward(dy);
  embedding.lookup_backward(batch_.tgt_in, tgt_word_dropout_.backward(ctx, dy));
  Tensor dx = src_dropout_.backward(ctx, encoder.backward(ctx, dmemory));
  src_positions.backward(dx);
  embedding.lookup_backward(batch_.src, src_word_dropout_.backward(ctx, dx));
}

}  // namespace transduce
