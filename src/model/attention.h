// Multi-head scaled dot-product attention (section 3.2), with h, d_k and d_v set independently.
#pragma once

#include <utility>
#include <vector>

#include "model/config.h"
#include "model/dropout.h"
#include "model/linear.h"
#include "ops/ops.h"

namespace transduce {

class MultiHeadAttention {
 public:
  // A block of the score matrix: queries q0..q1-1 against keys k0..k1-1. Training computes one
  // block of everything, or, with a window, the band of blocks the window reaches.
  struct Band {
    int64_t q0, q1, k0, k1;
  };

  MultiHeadAttention(const std::string& name, const ModelConfig& config);

  // xq [B, Lq, d] attends over xkv [B, Lk, d] (the same tensor for self-attention). key_pad (U8
  // [B, Lk], optional) hides padded keys; `causal` hides key j from query i when j > i; in
  // self-attention, the config's attention_window hides keys further than it from the query.
  Tensor forward(Context& ctx, const Tensor& xq, const Tensor& xkv, const Tensor& key_pad,
                 bool causal);
  // The two halves of forward, for incremental decoding: keys and values of xkv ([B, L, h*d_k],
  // [B, L, h*d_v]), and attention of xq over the first `lk` positions of given keys/values
  // (a cache may hold more; F32, or int8 in inference). Key j is hidden from query i when causal
  // and j > i + causal_offset, and when window > 0 and |j - (i + causal_offset)| > window.
  std::pair<Tensor, Tensor> keys_values(Context& ctx, const Tensor& xkv);
  Tensor attend(Context& ctx, const Tensor& xq, const ops::HeadVectors& keys,
                const ops::HeadVectors& values, int64_t lk, const Tensor& key_pad, bool causal,
                int64_t causal_offset, int64_t window = 0);
  // Inference: the keys and values of xkv's rows ([..., d], n rows) into the first n rows of
  // `keys` and `values` (copied, or quantized when they are int8); the projections' outputs are
  // given back to ctx's arena.
  void store_keys_values(Context& ctx, const Tensor& xkv, const ops::HeadVectors& keys,
                         const ops::HeadVectors& values);
  // Inference: each row of xq [n, 1, d] attends over the first `lk` positions of its past in
  // decoder layer `layer` of a history (ops::attention_history), the last attention_window + 1 of
  // them with a window.
  Tensor attend_history(Context& ctx, const Tensor& xq, const ops::KvHistory& history,
                        int64_t layer, int64_t lk);
  // Returns d(xq), or adds it into `dq_into` (and returns that) when given; dy is read before
  // dq_into is written, so they may be one tensor. For self-attention the key/value path's
  // gradient is added into it too; for cross-attention it is added into `dkv_into` ([B, Lk, d]).
  Tensor backward(Context& ctx, const Tensor& dy, const Tensor& dkv_into = {},
                  const Tensor& dq_into = {});
  void collect(ParamList& out);

  // The attention weights of the last forward, [B, heads, Lq, Lk] (before attention dropout).
  const Tensor& probabilities() const { return probs_; }
  int64_t heads() const { return heads_; }

  Linear q_proj, k_proj, v_proj, out_proj;

 private:
  // Whether the last training forward computed one band of every query and key, all the keys
  // given, which the fused kernels (ops/attention_train.h) take whole.
  bool fused() const;
  void banded_scores(float scale, const Tensor& key_pad, bool causal, int64_t causal_offset,
                     int64_t window);
  // From the projections' gradients dq, dk, dv back to the inputs'.
  Tensor finish_backward(Context& ctx, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                         const Tensor& dkv_into, const Tensor& dq_into);

  std::string name_;  // the parameter-name prefix, under which weights are recorded
  int64_t heads_, d_k_, d_v_;
  int64_t window_;  // restricted self-attention (0: none)
  Dropout attn_dropout_;
  bool self_ = false;
  int64_t batch_ = 0, lq_ = 0, lk_ = 0;
  Tensor q_, k_, v_, probs_, probs_dropped_;
  std::vector<Band> bands_;  // the blocks the last training forward computed
};

}  // namespace transduce
