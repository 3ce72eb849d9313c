// The encoder-decoder Transformer with its label-smoothed loss: forward saves activations in the
// step's arena, backward accumulates every parameter's gradient.
#pragma once

#include "model/decoder.h"
#include "model/embedding.h"
#include "model/encoder.h"
#include "model/positional.h"
#include "model/precision.h"
#include "ops/ops.h"

namespace transduce {

// Token ids, I32, right-padded with pad_id. tgt_in starts with BOS; tgt_out is tgt_in shifted
// left and ends in EOS.
struct Batch {
  Tensor src;      // [B, Ls]
  Tensor tgt_in;   // [B, Lt]
  Tensor tgt_out;  // [B, Lt]
};

// The batch's sentences followed by the same sentences again [2B, ...]: R-Drop's two passes
// through different dropout masks as one forward (Transformer::train_step's consistency).
Batch repeated_twice(const Batch& batch);

class Transformer {
 public:
  explicit Transformer(const ModelConfig& config);

  // Xavier-uniform projections, N(0, d^-1/2) embeddings, unit layer-norm gains; zero biases.
  void init_parameters(uint64_t seed);
  const ParamList& parameters() const { return params_; }
  // Looks a parameter up by its safetensors name; nullptr when there is none.
  Param* find(const std::string& name) const;
  void zero_grad();
  // The GEMMs' input type. BF16 gives every GEMM weight (Param::gemm_weight) a bf16 copy of its
  // value, rounded now; FP32 drops the copies. INT8 (inference) quantizes them (quantize_int8)
  // and packs them for ops::gemm_int8, keeping only the packed copy of a linear layer's weights
  // and the embedding's int8 rows (its lookups read them; its projection the packed copy); the
  // decoder then keeps its keys and values in int8 too. Refuses a type this CPU lacks the dot
  // products for.
  void set_precision(Precision p);
  // Every GEMM weight quantized to int8 per output row (left as read when the file held int8)
  // and its fp32 value released, for good; nothing packed, so any CPU can: what `transduce
  // quantize` saves. The model translates only after set_precision(INT8).
  void quantize_int8();
  // Frees every gradient: a model that will only translate.
  void release_gradients();
  // Packs every fp32 or bf16 GEMM weight for translation (Param::packed), after set_precision:
  // the products of a decoder step then read weights already in the library's layout. The
  // copies stay until the precision changes; nothing may change the weights while they do.
  void pack_for_inference();
  Precision precision() const { return precision_; }
  const ModelConfig& config() const { return config_; }

  // Runs the model and the loss; keeps what backward needs. The returned sums are over the
  // batch's non-pad target tokens.
  ops::CrossEntropySums forward(Context& ctx, const Batch& batch);
  // Gradients of (loss sum * grad_scale); grad_scale = 1 / tokens gives the mean loss's.
  void backward(Context& ctx, float grad_scale);
  // forward() and backward() as training runs them: the projection, the loss's forward and
  // backward and the projection's backward a block of rows at a time (loss_block_rows()), so
  // that the whole batch's logits never exist; the same sums and gradients up to the order of
  // fp32 sums across blocks (bit for bit with one block).
  // With consistency > 0 the batch must be repeated_twice() and the loss is R-Drop's: the
  // cross-entropy of both copies plus `consistency` times the symmetric KL divergence between
  // the copies' distributions at each target position (ops::consistency_loss_train).
  ops::CrossEntropySums train_step(Context& ctx, const Batch& batch, float grad_scale,
                                   float consistency = 0);
  // train_step's blocks: as many rows as make kLossBlockFloats logits (at least
  // kLossBlockMinRows), or the rows set (tests reach several blocks at small sizes so).
  static constexpr int64_t kLossBlockFloats = int64_t{1} << 24;  // 64 MB of fp32 logits
  static constexpr int64_t kLossBlockMinRows = 64;
  int64_t loss_block_rows() const;
  void set_loss_block_rows(int64_t rows) { loss_block_rows_ = rows; }

  // Pieces of forward, for inference and tests.
  Tensor padding_mask(Context& ctx, const Tensor& ids) const;  // U8, 1 where ids == pad
  Tensor encode(Context& ctx, const Tensor& src, const Tensor& src_pad);
  Tensor decode(Context& ctx, const Tensor& tgt_in, const Tensor& tgt_pad, const Tensor& memory,
                const Tensor& src_pad);  // logits [B, Lt, V]
  // Incremental decoding. start_decoding prepares a cache for up to `capacity` target positions
  // from the encoder output, each sentence repeated `repeat` times in a row (beam search); the
  // cache lives in ctx's arena, which must outlast the decoding, but for its self-attention
  // history, which start_decoding puts alone in `history` (resetting it);
  // decode_step takes the tokens [N] at position cache.length, returns logits [N, V] and
  // extends the cache; N is the cache's rows, or at the first position with `repeat` > 1 may be
  // its sentences (one row for each sentence's identical group, DecoderCache::
  // share_first_position). Both are inference only (no dropout, no backward).
  DecoderCache start_decoding(Context& ctx, Arena& history, const Tensor& memory,
                              const Tensor& src_pad, int64_t capacity, int64_t repeat = 1);
  Tensor decode_step(Context& ctx, const Tensor& tokens, DecoderCache& cache);

  // Valid after forward() until backward() overwrites them with their gradient (and after
  // train_step with a consistency weight); train_step's plain loss keeps none.
  const Tensor& logits() const { return logits_; }

  SharedEmbedding embedding;
  PositionalEncoding src_positions, tgt_positions;
  Encoder encoder;
  Decoder decoder;

 private:
  Tensor embed(Context& ctx, const Tensor& ids, const PositionalEncoding& positions,
               WordDropout& word_dropout, Dropout& dropout);
  Tensor decoder_output(Context& ctx, const Tensor& tgt_in, const Tensor& tgt_pad,
                        const Tensor& memory, const Tensor& src_pad);
  // forward() up to the decoder's output (dec_out_), or to the logits (logits_).
  void forward_to_decoder_output(Context& ctx, const Batch& batch);
  void forward_to_logits(Context& ctx, const Batch& batch);
  Tensor bf16_logits_gradient(Context& ctx, const Tensor& logits) const;
  void backward_from_logits(Context& ctx, const Tensor& dlogits_bf16);
  void backward_from_decoder_output(Context& ctx, const Tensor& ddec);

  ModelConfig config_;
  ParamList params_;
  Precision precision_ = Precision::FP32;
  WordDropout src_word_dropout_, tgt_word_dropout_;
  Dropout src_dropout_, tgt_dropout_;
  Batch batch_;
  Tensor src_pad_, tgt_pad_, memory_, dec_out_, logits_, lse_;
  int64_t loss_block_rows_ = 0;  // 0: from kLossBlockFloats
};

}  // namespace transduce
