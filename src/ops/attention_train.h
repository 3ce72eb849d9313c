// Fused attention for training: every (sentence, head) pair is one task that computes its score
// matrix, mask and softmax, or its weighted sum of values, or the whole backward, in the thread's
// cache. A pair's products are a few dozen rows by a head's width: one BLAS call each costs more
// in packing and call overhead than the arithmetic (docs/experiments/training-speed.md).
//
// All tensors are F32 (but attention_context's output) and contiguous: queries q [B, Lq,
// heads*d_k], keys k [B, Lk, heads*d_k], values v [B, Lk, heads*d_v], probabilities [B, heads, Lq,
// Lk], contexts [B, Lq, heads*d_v].
#pragma once

#include "core/tensor.h"

namespace transduce::ops {

// Which keys each query sees: the rules of masked_softmax (ops.h).
struct AttentionMask {
  Tensor key_pad;  // U8 [B, Lk], non-zero hides a key; optional
  bool causal = false;
  int64_t causal_offset = 0;
  int64_t window = 0;
};

// probs = masked softmax(scale * Q K^T), per pair.
void attention_probabilities(const Tensor& q, const Tensor& k, int64_t heads, float scale,
                             const AttentionMask& mask, const Tensor& probs);

// context = probs V, per pair (probs after attention dropout, if any). context may be BF16: the
// values rounded as they are written, a bf16 model's operand for the output layer.
void attention_context(const Tensor& probs, const Tensor& v, int64_t heads, const Tensor& context);

// The backward of attention_probabilities, dropout (keep mask U8 like probs, with its rate p;
// undefined when no dropout ran) and attention_context: from dcontext, writes dq, dk and dv
// (shaped like q, k and v). `dropped` is what attention_context read (probs itself without
// dropout).
struct AttentionGradients {
  Tensor dq, dk, dv;
};
void attention_backward(const Tensor& dcontext, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& probs, const Tensor& dropped, const Tensor& dropout_keep,
                        float dropout_p, int64_t heads, float scale,
                        const AttentionGradients& grads);

}  // namespace transduce::ops
