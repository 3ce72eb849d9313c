// The decoder: N layers of masked self-attention, encoder-decoder attention and feed-forward
// sub-layers (section 3.1).
#pragma once

#include <memory>
#include <vector>

#include "model/attention.h"
#include "model/feed_forward.h"
#include "model/kv_cache.h"
#include "model/residual.h"

namespace transduce {

class DecoderLayer {
 public:
  DecoderLayer(const std::string& name, const ModelConfig& config);
  // y [B, Lt, d]; memory [B, Ls, d] is the encoder output.
  Tensor forward(Context& ctx, const Tensor& y, const Tensor& tgt_pad, const Tensor& memory,
                 const Tensor& src_pad);
  // Adds the gradient w.r.t. the encoder output into dmemory.
  Tensor backward(Context& ctx, const Tensor& dy, const Tensor& dmemory);
  // One position y [N, 1, d] at position cache.length, as decoder layer `layer`, attending over
  // the cache (whose history it extends).
  Tensor step(Context& ctx, const Tensor& y, DecoderCache& cache, int64_t layer);
  void collect(ParamList& out);

  ResidualNorm self_res;
  MultiHeadAttention self_attn;
  ResidualNorm cross_res;
  MultiHeadAttention cross_attn;
  ResidualNorm ffn_res;
  FeedForward ffn;
};

class Decoder {
 public:
  explicit Decoder(const ModelConfig& config);
  Tensor forward(Context& ctx, const Tensor& y, const Tensor& tgt_pad, const Tensor& memory,
                 const Tensor& src_pad);
  Tensor backward(Context& ctx, const Tensor& dy, const Tensor& dmemory);
  // Incremental decoding: one position y [N, 1, d] at cache.length; the caller advances length.
  Tensor step(Context& ctx, const Tensor& y, DecoderCache& cache);
  void collect(ParamList& out);

  std::vector<std::unique_ptr<DecoderLayer>> layers;
  std::unique_ptr<LayerNorm> final_norm;  // pre-LN only
};

}  // namespace transduce
