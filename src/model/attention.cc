#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "model/attention_recorder.h"
#include "model/bf16_operand.h"
#include "ops/attention_train.h"
#include "ops/ops.h"
#include "ops/visible_keys.h"

namespace transduce {

MultiHeadAttention::MultiHeadAttention(const std::string& name, const ModelConfig& c)
    : q_proj(name + ".q_proj", c.d_model, int64_t{c.heads} * c.d_k),
      k_proj(name + ".k_proj", c.d_model, int64_t{c.heads} * c.d_k),
      v_proj(name + ".v_proj", c.d_model, int64_t{c.heads} * c.d_v),
      out_proj(name + ".out_proj", int64_t{c.heads} * c.d_v, c.d_model),
      name_(name),
      heads_(c.heads),
      d_k_(c.d_k),
      d_v_(c.d_v),
      window_(c.attention_window),
      attn_dropout_(c.attention_dropout) {}

void MultiHeadAttention::collect(ParamList& out) {
  q_proj.collect(out);
  k_proj.collect(out);
  v_proj.collect(out);
  out_proj.collect(out);
}

// Heads are column blocks of the projections: head j of sentence b is the block at row b*L,
// column j*d_head of t seen as [B*L, heads*d_head], where L = t.dim(1) (for a key/value cache, its
// capacity: only the first positions may be in use).
static ops::MatrixGrid heads_of(const Tensor& t, int64_t d_head, int64_t heads) {
  return {t, 0, heads * d_head, t.dim(1) * heads * d_head, d_head};
}
// The same from position `row` on.
static ops::MatrixGrid heads_of(const Tensor& t, int64_t d_head, int64_t heads, int64_t row) {
  ops::MatrixGrid g = heads_of(t, d_head, heads);
  g.offset = row * heads * d_head;
  return g;
}
// Per-(sentence, head) score matrices [Lq, Lk] of a [B, heads, Lq, Lk] tensor, from query row q0
// and key column k0 on.
static ops::MatrixGrid scores_of(const Tensor& t, int64_t lq, int64_t lk, int64_t heads,
                                 int64_t q0 = 0, int64_t k0 = 0) {
  return {t, q0 * lk + k0, lk, heads * lq * lk, lq * lk};
}

namespace {

// Restricted self-attention in training computes only a band of the score matrix: queries in
// blocks of kBandRows, each block against the keys its window reaches, so the products cost
// O(window * L) rather than O(L^2). Without a window there is one block of every query and key.
constexpr int64_t kBandRows = 64;

using Band = MultiHeadAttention::Band;

// A block's keys: from the first its first query sees to the last its last query sees.
std::vector<Band> score_bands(int64_t lq, int64_t lk, int64_t window, bool causal) {
  if (window <= 0) return {{0, lq, 0, lk}};
  std::vector<Band> bands;
  for (int64_t q0 = 0; q0 < lq; q0 += kBandRows) {
    const int64_t q1 = std::min(lq, q0 + kBandRows);
    const int64_t k0 = ops::visible_keys(q0, lk, causal, window).first;
    const int64_t k1 = std::max(k0, ops::visible_keys(q1 - 1, lk, causal, window).end);
    bands.push_back({q0, q1, k0, k1});
  }
  return bands;
}

}  // namespace

Tensor MultiHeadAttention::forward(Context& ctx, const Tensor& xq, const Tensor& xkv,
                                   const Tensor& key_pad, bool causal) {
  self_ = xq.raw() == xkv.raw();
  // A bf16 model rounds each input once for all the projections that read it.
  const Tensor kv_in = k_proj.gemm_input(ctx, xkv);
  const Tensor q_in = self_ ? kv_in : q_proj.gemm_input(ctx, xq);
  auto [keys, values] = keys_values(ctx, kv_in);
  return attend(ctx, q_in, keys, values, xkv.dim(1), key_pad, causal, 0, self_ ? window_ : 0);
}

std::pair<Tensor, Tensor> MultiHeadAttention::keys_values(Context& ctx, const Tensor& xkv) {
  Tensor keys = k_proj.forward(ctx, xkv);
  return {keys, v_proj.forward(ctx, xkv)};
}

void MultiHeadAttention::store_keys_values(Context& ctx, const Tensor& xkv,
                                           const ops::HeadVectors& keys,
                                           const ops::HeadVectors& values) {
  const Arena::Mark start = ctx.arena.mark();
  const int64_t n = xkv.numel() / xkv.dim(xkv.ndim() - 1);
  auto [k, v] = keys_values(ctx, xkv);
  ops::store_heads(k.reshape({n, heads_ * d_k_}), heads_, keys);
  ops::store_heads(v.reshape({n, heads_ * d_v_}), heads_, values);
  ctx.arena.release(start);
}

Tensor MultiHeadAttention::attend_history(Context& ctx, const Tensor& xq,
                                          const ops::KvHistory& history, int64_t layer,
                                          int64_t lk) {
  TD_CHECK(xq.ndim() == 3 && xq.dim(1) == 1,
           "attention over a decoding history is for one new position, not {}", xq.shape().str());
  const int64_t n = xq.dim(0);
  const Tensor q = q_proj.forward(ctx, xq);
  Tensor context = ctx.alloc({n, 1, heads_ * d_v_});
  Tensor weights = ctx.attention ? ctx.alloc({n, heads_, 1, lk}) : Tensor();
  ops::attention_history(q.reshape({n, heads_ * d_k_}), history, layer, lk,
                         1.0f / std::sqrt(static_cast<float>(d_k_)),
                         context.reshape({n, heads_ * d_v_}), weights, window_);
  if (ctx.attention) ctx.attention->record(name_, weights);
  return out_proj.forward(ctx, context);
}

bool MultiHeadAttention::fused() const {
  // Keys from a cache may hold more positions than the lk in use.
  return k_.dim(1) == lk_ && bands_.size() == 1 && bands_[0].q0 == 0 && bands_[0].q1 == lq_ &&
         bands_[0].k0 == 0 && bands_[0].k1 == lk_;
}

void MultiHeadAttention::banded_scores(float scale, const Tensor& key_pad, bool causal,
                                       int64_t causal_offset, int64_t window) {
  for (const Band& b : bands_)
    ops::gemm_grid(false, true, b.q1 - b.q0, b.k1 - b.k0, d_k_, scale,
                   heads_of(q_, d_k_, heads_, b.q0), heads_of(k_, d_k_, heads_, b.k0), 0.0f,
                   scores_of(probs_, lq_, lk_, heads_, b.q0, b.k0), batch_, heads_);
  ops::masked_softmax(probs_, batch_, heads_, key_pad, causal, causal_offset, window);
}

Tensor MultiHeadAttention::attend(Context& ctx, const Tensor& xq, const ops::HeadVectors& keys_hv,
                                  const ops::HeadVectors& values_hv, int64_t lk,
                                  const Tensor& key_pad, bool causal, int64_t causal_offset,
                                  int64_t window) {
  const Tensor& keys = keys_hv.data;
  const Tensor& values = values_hv.data;
  batch_ = xq.dim(0);
  lq_ = xq.dim(1);
  lk_ = lk;
  TD_CHECK(keys.dim(0) == batch_ && values.dim(0) == batch_ && lk <= keys.dim(1) &&
               keys.dim(1) == values.dim(1),
           "attention over keys {} values {} for queries {}", keys.shape().str(),
           values.shape().str(), xq.shape().str());
  q_ = q_proj.forward(ctx, xq);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k_));
  if (ctx.inference) {  // nothing to keep for backward: one fused pass
    Tensor context = ctx.alloc({batch_, lq_, heads_ * d_v_});
    Tensor weights = ctx.attention ? ctx.alloc({batch_, heads_, lq_, lk_}) : Tensor();
    ops::attention_inference(q_, keys_hv, values_hv, lk, heads_, scale, key_pad, causal,
                             causal_offset, context, weights, window);
    if (ctx.attention) ctx.attention->record(name_, weights);
    return out_proj.forward(ctx, context);
  }

  TD_CHECK(keys.dtype() == DType::F32 && values.dtype() == DType::F32,
           "training attends over fp32 keys and values, not {}", dtype_name(keys.dtype()));
  k_ = keys;
  v_ = values;
  // Bands for self-attention over its own positions; anything else computes every score (the mask
  // still applies).
  bands_ = score_bands(lq_, lk_, causal_offset == 0 && lq_ == lk_ ? window : 0, causal);
  // One band of every query and key goes through the fused kernels; a window's bands through
  // products per band. Scores outside the bands are never computed; masked_softmax zeroes them
  // (they lie outside the window) before anything reads them.
  probs_ = ctx.alloc({batch_, heads_, lq_, lk_});
  if (fused())
    ops::attention_probabilities(q_, k_, heads_, scale, {key_pad, causal, causal_offset, window},
                                 probs_);
  else
    banded_scores(scale, key_pad, causal, causal_offset, window);
  probs_dropped_ = attn_dropout_.forward(ctx, probs_);

  const Shape shape{batch_, lq_, heads_ * d_v_};
  auto weighted_values = [&](Context& c) {
    Tensor context = c.alloc(shape);
    if (fused()) {
      ops::attention_context(probs_dropped_, v_, heads_, context);
      return context;
    }
    for (const Band& b : bands_)
      ops::gemm_grid(false, false, b.q1 - b.q0, d_v_, b.k1 - b.k0, 1.0f,
                     scores_of(probs_dropped_, lq_, lk_, heads_, b.q0, b.k0),
                     heads_of(v_, d_v_, heads_, b.k0), 0.0f, heads_of(context, d_v_, heads_, b.q0),
                     batch_, heads_);
    return context;
  };
  // A bf16 model keeps the context only as out_proj's bf16 operand, which the fused kernel writes
  // directly.
  if (!out_proj.weight.bf16.defined()) return out_proj.forward(ctx, weighted_values(ctx));
  if (fused()) {
    Tensor context = ctx.alloc(shape, DType::BF16);
    ops::attention_context(probs_dropped_, v_, heads_, context);
    return out_proj.forward(ctx, context);
  }
  return out_proj.forward(ctx, kept_as_bf16(ctx, shape, weighted_values));
}

Tensor MultiHeadAttention::backward(Context& ctx, const Tensor& dy, const Tensor& dkv_into,
                                    const Tensor& dq_into) {
  TD_CHECK(k_.dim(1) == lk_, "backward through attention over a key/value cache");
  Tensor dcontext = out_proj.backward(ctx, dy);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k_));

  Tensor dq = ctx.alloc(q_.shape());
  if (fused()) {
    Tensor dk = ctx.alloc(k_.shape()), dv = ctx.alloc(v_.shape());
    ops::attention_backward(dcontext, q_, k_, v_, probs_, probs_dropped_, attn_dropout_.mask(),
                            attn_dropout_.p(), heads_, scale, {dq, dk, dv});
    return finish_backward(ctx, dq, dk, dv, dkv_into, dq_into);
  }
  // d(probs) = dcontext V^T ; dV = probs^T dcontext. With several bands, d(probs) is zero outside
  // them (softmax's backward reads whole rows) and the bands' key ranges overlap, so dV and dK
  // are sums over the bands.
  const bool banded = bands_.size() > 1;
  const float accumulate = banded ? 1.0f : 0.0f;
  Tensor dprobs = banded ? ctx.zeros(probs_.shape()) : ctx.alloc(probs_.shape());
  Tensor dv = banded ? ctx.zeros(v_.shape()) : ctx.alloc(v_.shape());
  for (const Band& b : bands_) {
    ops::gemm_grid(false, true, b.q1 - b.q0, b.k1 - b.k0, d_v_, 1.0f,
                   heads_of(dcontext, d_v_, heads_, b.q0), heads_of(v_, d_v_, heads_, b.k0), 0.0f,
                   scores_of(dprobs, lq_, lk_, heads_, b.q0, b.k0), batch_, heads_);
    ops::gemm_grid(true, false, b.k1 - b.k0, d_v_, b.q1 - b.q0, 1.0f,
                   scores_of(probs_dropped_, lq_, lk_, heads_, b.q0, b.k0),
                   heads_of(dcontext, d_v_, heads_, b.q0), accumulate,
                   heads_of(dv, d_v_, heads_, b.k0), batch_, heads_);
  }

  // Through dropout and softmax, then the 1/sqrt(d_k) scale, into d(scores).
  Tensor dscores = attn_dropout_.backward(ctx, dprobs);
  ops::softmax_backward(probs_, dscores, scale);

  // dQ = dscores K ; dK = dscores^T Q.
  Tensor dk = banded ? ctx.zeros(k_.shape()) : ctx.alloc(k_.shape());
  for (const Band& b : bands_) {
    ops::gemm_grid(false, false, b.q1 - b.q0, d_k_, b.k1 - b.k0, 1.0f,
                   scores_of(dscores, lq_, lk_, heads_, b.q0, b.k0),
                   heads_of(k_, d_k_, heads_, b.k0), 0.0f, heads_of(dq, d_k_, heads_, b.q0), batch_,
                   heads_);
    ops::gemm_grid(true, false, b.k1 - b.k0, d_k_, b.q1 - b.q0, 1.0f,
                   scores_of(dscores, lq_, lk_, heads_, b.q0, b.k0),
                   heads_of(q_, d_k_, heads_, b.q0), accumulate, heads_of(dk, d_k_, heads_, b.k0),
                   batch_, heads_);
  }

  return finish_backward(ctx, dq, dk, dv, dkv_into, dq_into);
}

Tensor MultiHeadAttention::finish_backward(Context& ctx, const Tensor& dq, const Tensor& dk,
                                           const Tensor& dv, const Tensor& dkv_into,
                                           const Tensor& dq_into) {
  Tensor dxq = q_proj.backward(ctx, dq, dq_into);
  const Tensor& dkv = self_ ? dxq : dkv_into;
  TD_CHECK(dkv.defined(), "cross-attention backward needs a key/value gradient buffer");
  k_proj.backward(ctx, dk, dkv);
  v_proj.backward(ctx, dv, dkv);
  return dxq;
}

}  // namespace transduce
