// The encoder: N identical layers of self-attention and feed-forward sub-layers (section 3.1).
#pragma once

#include <memory>
#include <vector>

#include "model/attention.h"
#include "model/feed_forward.h"
#include "model/residual.h"

namespace transduce {

class EncoderLayer {
 public:
  EncoderLayer(const std::string& name, const ModelConfig& config);
  // x [B, L, d]; src_pad U8 [B, L].
  Tensor forward(Context& ctx, const Tensor& x, const Tensor& src_pad);
  Tensor backward(Context& ctx, const Tensor& dy);
  void collect(ParamList& out);

  ResidualNorm attn_res;
  MultiHeadAttention self_attn;
  ResidualNorm ffn_res;
  FeedForward ffn;
};

class Encoder {
 public:
  explicit Encoder(const ModelConfig& config);
  Tensor forward(Context& ctx, const Tensor& x, const Tensor& src_pad);
  Tensor backward(Context& ctx, const Tensor& dy);
  void collect(ParamList& out);

  std::vector<std::unique_ptr<EncoderLayer>> layers;
  std::unique_ptr<LayerNorm> final_norm;  // pre-LN only
};

}  // namespace transduce
