// The one interface model code calls for computation. Each op checks where its tensors live and
// runs the matching backend (ops/cpu/ now; ops/cuda/ later). Tensors are F32 and contiguous
// unless stated; an N-d tensor given as a matrix is read as [rows, cols] = [numel/last, last].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "core/tensor.h"
#include "ops/int8_matrix.h"
#include "ops/packed_weights.h"

namespace transduce::ops {

// C = alpha * op(A) op(B) + beta * C. C is F32; A and B are both F32 (OpenBLAS's sgemm) or both
// BF16 (oneDNN's matmul: bf16 products summed in fp32, on AVX512-BF16 or AMX; see bf16_support;
// elsewhere the same products, the operands widened to fp32 for OpenBLAS).
void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c,
          float alpha = 1.0f, float beta = 0.0f);
// A linear layer's product: y = x w^T + bias (w [n, k], bias F32 [n]), then max(y, 0) when
// `relu`. y is F32, or BF16 when x and w are: oneDNN adds the bias, applies the ReLU and rounds
// to bf16 in the product's epilogue, so the fp32 output is never written; fp32 products start
// from the bias (fill_rows) and apply the ReLU in a second pass.
void linear_product(const Tensor& x, const Tensor& w, const Tensor& bias, bool relu,
                    const Tensor& y);

// dst (BF16) = src (F32) rounded to the nearest bf16, ties to even; same element count.
void to_bf16(const Tensor& src, const Tensor& dst);
// dst (BF16) = max(src, 0) rounded so: a ReLU and the next product's operand in one pass.
void relu_to_bf16(const Tensor& src, const Tensor& dst);

// Whether this CPU runs BF16 GEMMs on bf16 dot-product instructions, as oneDNN sees it (its
// ONEDNN_MAX_CPU_ISA variable can lower what it uses). `isa` names oneDNN's instruction set.
struct Bf16Support {
  bool available = false;
  std::string isa;
};
Bf16Support bf16_support();
std::string onednn_version();  // "2.6.3"
// The F32 GEMMs' library and the kernels it chose for this CPU, e.g. "OpenBLAS 0.3.21 (SkylakeX)".
std::string fp32_gemm_library();
// The implementation oneDNN picks for a BF16 GEMM of this shape, transpositions and scaling at
// the current thread count (e.g. "brg:avx512_core_amx_bf16"), or the widened fallback's name.
std::string bf16_gemm_kernel(int64_t m, int64_t n, int64_t k, bool trans_a = false,
                             bool trans_b = true, float alpha = 1.0f, float beta = 0.0f);

// int8 products for inference: oneDNN's matmul, s8 x s8 summed exactly in s32, on AMX or
// AVX512-VNNI (elsewhere the same sums from a plain loop, ops/cpu/int8_sums.h). Rows of x (F32
// [rows, cols]) quantized as Int8Matrix describes: q (I8, x's shape) and scales (F32 [rows]).
void quantize_rows(const Tensor& x, const Tensor& q, const Tensor& scales);
// W (F32 [n, k]) quantized per row, and packed for gemm_int8.
Int8Matrix quantize_matrix(const Tensor& w);
// Packs m.q (set, with m.scales, by quantize_matrix or read from a file) for gemm_int8.
void pack_int8(Int8Matrix& m);
// y [rows, n] = x [rows, k] W^T + bias ([n], optional; y F32): each row of x quantized at run
// time, y[i, j] = x_scale[i] * w.scales[j] * sum_t xq[i, t] wq[j, t] + bias[j].
void gemm_int8(const Tensor& x, const Int8Matrix& w, const Tensor& bias, const Tensor& y);
// Whether this CPU has int8 dot-product instructions oneDNN uses (AVX512-VNNI, AVX-VNNI or
// AMX); `isa` names oneDNN's instruction set.
struct Int8Support {
  bool available = false;
  std::string isa;
};
Int8Support int8_support();
// The implementation oneDNN picks for an int8 product of this shape (e.g.
// "brg:avx512_core_amx_int8").
std::string int8_gemm_kernel(int64_t m, int64_t n, int64_t k);

// Products with packed weights, for inference (ops/packed_weights.h). pack_weights copies W (F32
// or BF16 [n, k]) into oneDNN's layout once; it returns undefined weights where oneDNN has no fast
// product for them on this CPU (BF16 without bf16 instructions, any type without AVX2), and the
// caller keeps linear_product.
PackedWeights pack_weights(const Tensor& w);
// y [rows, n] = x [rows, k] W^T (+ bias, F32 [n], when given) (then max(., 0) when relu), in
// one product: x has W's type; y is F32, or BF16 (rounded in the epilogue) for BF16 weights.
void linear_packed(const Tensor& x, const PackedWeights& w, const Tensor& bias, bool relu,
                   const Tensor& y);
// The implementation oneDNN picks for `rows` rows times w (e.g. "brg:avx512_core").
std::string packed_gemm_kernel(int64_t rows, const PackedWeights& w);

// A grid of outer x inner row-major matrices inside one tensor: matrix (o, i) starts at element
// offset + o * stride_outer + i * stride_inner and its rows are `ld` elements apart. This reaches
// every head of every sentence in a [B, L, heads * d_head] activation without copying.
struct MatrixGrid {
  Tensor t;
  int64_t offset = 0;
  int64_t ld = 0;
  int64_t stride_outer = 0;
  int64_t stride_inner = 0;
};

// For every (o, i) of the grid: C = alpha * op(A) op(B) + beta * C, with op(A) m x k, op(B) k x n.
void gemm_grid(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const MatrixGrid& a, const MatrixGrid& b, float beta, const MatrixGrid& c,
               int64_t outer, int64_t inner);

// Attention probabilities in place: scores [batch, heads, lq, lk] -> softmax over the last axis.
// Key j of sentence b is hidden when key_pad (U8 [batch, lk], optional) is non-zero, and, if
// `causal`, when j > i + causal_offset for query i. A row with every key hidden becomes zeros.
// With window > 0 (restricted self-attention), key j is also hidden from query i when
// |j - (i + causal_offset)| > window.
void masked_softmax(const Tensor& scores, int64_t batch, int64_t heads, const Tensor& key_pad,
                    bool causal, int64_t causal_offset, int64_t window = 0);
// Keys or values as inference keeps them, [..., heads * d]: F32, or I8 with one F32 scale per
// head's vector (`scales` [..., heads]; the vector is scale * q, quantized by store_heads).
struct HeadVectors {
  Tensor data;    // F32, BF16 (a bf16 model's decoder caches) or I8
  Tensor scales;  // I8 data only
  HeadVectors() = default;
  HeadVectors(Tensor d, Tensor s = Tensor()) : data(std::move(d)), scales(std::move(s)) {}
};
// dst's first src.rows() rows = src (F32 [n, heads * d]): copied when dst is F32, rounded when
// BF16, else each head's d values quantized to int8 with scale max|x| / 127 (as quantize_rows
// does a row).
void store_heads(const Tensor& src, int64_t heads, const HeadVectors& dst);

// Attention for inference in one pass, without materialising the probabilities: for sentence b,
// head h, query i, context[b, i, h] = softmax_j(scale * q[b, i, h] . keys[b, j, h]) values[b, j, h]
// over the first lk keys, masked as masked_softmax masks (a fully masked query gets zeros).
// q [B, Lq, H*dk], keys [B, C, H*dk], values [B, C, H*dv] with C >= lk (a cache's capacity; F32,
// or both I8 with scales), context [B, Lq, H*dv]. When `probs` ([B, H, Lq, lk]) is given, the
// weights are written there too (zero for hidden keys): attention visualisation sees exactly what
// the context was made of.
void attention_inference(const Tensor& q, const HeadVectors& keys, const HeadVectors& values,
                         int64_t lk, int64_t heads, float scale, const Tensor& key_pad, bool causal,
                         int64_t causal_offset, const Tensor& context,
                         const Tensor& probs = Tensor(), int64_t window = 0);
// The self-attention keys and values incremental decoding keeps, position-major: row (t, l, s) of
// `rows` ([capacity, layers, slots, row_bytes()] bytes) holds slot s's key and value in decoder
// layer l at position t: fp32 keys then values, or (int8) int8 keys, values, then their fp32
// scales, one per head's vector (key scales first). slot_of[t, r] (I32 [capacity, slots]) names the
// slot holding row r's position t, so that a beam search reorders its rows by moving slot numbers
// only. Each position's rows lie after the previous position's, whatever the capacity: decoding
// touches the memory of the positions it reaches, and nothing after them.
struct KvHistory {
  Tensor rows;                 // U8 [capacity, layers, slots, row_bytes(...)]
  Tensor slot_of;              // I32 [capacity, slots]
  DType element = DType::F32;  // of the keys and values: F32, BF16 or I8 (with scales)
  int64_t heads = 0, dk = 0, dv = 0;

  static int64_t row_bytes(DType element, int64_t heads, int64_t dk, int64_t dv);
  int64_t capacity() const { return slot_of.dim(0); }
  int64_t slots() const { return slot_of.dim(1); }
  int64_t layers() const { return rows.dim(1); }
};
// Rows (position, layer, 0..n-1) = keys [n, H*dk] and values [n, H*dv] (rounded when BF16,
// quantized when I8).
void store_history(const KvHistory& h, int64_t layer, int64_t position, const Tensor& keys,
                   const Tensor& values);
// Attention as attention_inference computes it for one new query per decoded row over that row's
// past: row r's key and value at position j < lk are layer `layer`'s in slot slot_of[j, r].
// q [n, H*dk] (n <= slots), context [n, H*dv], probs [n, H, 1, lk] when given.
// With window > 0, only the last window + 1 positions (the new one's and the window before it).
void attention_history(const Tensor& q, const KvHistory& h, int64_t layer, int64_t lk, float scale,
                       const Tensor& context, const Tensor& probs = Tensor(), int64_t window = 0);
// dscores (in: dL/dprobs, out: dL/dscores * scale), from the saved probs.
void softmax_backward(const Tensor& probs, const Tensor& dscores, float scale);

// y = (x - mean) * rstd * gamma + beta over the last axis; saves mean and rstd ([rows]).
void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                        const Tensor& y, const Tensor& mean, const Tensor& rstd);
// dx = ..., dgamma += ..., dbeta += ... (dx may alias dy).
void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& dx, const Tensor& dgamma,
                         const Tensor& dbeta);

// y = max(x, 0) (y may alias x); dx = dy where y > 0 (dx may alias dy), y F32 or BF16.
void relu_forward(const Tensor& x, const Tensor& y);
void relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dx);

// y = x * keep / (1 - p), keep drawn from (seed, stream); mask (U8) saves keep. p == 0 copies.
void dropout_forward(const Tensor& x, const Tensor& y, const Tensor& mask, float p, uint64_t seed,
                     uint64_t stream);
void dropout_backward(const Tensor& dy, const Tensor& mask, float p, const Tensor& dx);
// y = residual + dropout(x) in one pass: the same mask and numbers as dropout_forward then add.
// y may be x.
void dropout_add(const Tensor& residual, const Tensor& x, const Tensor& y, const Tensor& mask,
                 float p, uint64_t seed, uint64_t stream);

// Word dropout (Marian's --dropout-src/--dropout-trg): x holds rows of its last dimension (a
// token's embedding); each row is kept whole with probability 1 - p and scaled by 1 / (1 - p), or
// zeroed whole. mask (U8, one per row) saves keep, drawn from (seed, stream, row). p == 0 copies.
void word_dropout_forward(const Tensor& x, const Tensor& y, const Tensor& mask, float p,
                          uint64_t seed, uint64_t stream);
void word_dropout_backward(const Tensor& dy, const Tensor& mask, float p, const Tensor& dx);

// out = a + b (out may be a or b); a += alpha * b; x *= alpha.
void add(const Tensor& a, const Tensor& b, const Tensor& out);
void axpy(float alpha, const Tensor& b, const Tensor& a);
void scale(const Tensor& x, float alpha);
// x[r, :] = bias for every row: a GEMM then adds into it with beta 1, which spares BLAS its pass
// over the output (beta 0 zeroes it first) and a separate bias pass. dbias += column sums of dy.
void fill_rows(const Tensor& x, const Tensor& bias);
// With relu_out (the layer's ReLU output, F32 or BF16, shaped like dy), dy is first taken back
// through that ReLU (zero where relu_out is not above zero); with dy_bf16 (BF16), the dy summed
// is also written there rounded to bf16: a bf16 layer's GEMM operand, from one pass over dy.
void bias_grad(const Tensor& dy, const Tensor& dbias, const Tensor& dy_bf16 = Tensor(),
               const Tensor& relu_out = Tensor());

// out[r] = table[ids[r]] * scale; ids I32. An id outside the table is an error. The table is
// F32, or I8 with one F32 scale per row (`row_scales`, an Int8Matrix's q and scales).
void embedding_gather(const Tensor& table, const Tensor& ids, float scale, const Tensor& out,
                      const Tensor& row_scales = Tensor());
// dtable[ids[r]] += dout[r] * scale.
void embedding_scatter_add(const Tensor& dout, const Tensor& ids, float scale,
                           const Tensor& dtable);
// x [batch, len, d]: x[b, l] += table[l + offset]; and its gradient dtable[l + offset] += dx[b, l].
void add_positions(const Tensor& x, const Tensor& table, int64_t offset);
void positions_grad(const Tensor& dx, const Tensor& dtable, int64_t offset);

// In place: t[i] = t[rows[i]] for strictly increasing rows (I32 [M]); returns t's first M rows.
Tensor compact_rows(const Tensor& t, const Tensor& rows);
// Rows of log-probabilities: out[r] = x[r] - logsumexp(x[r]) (out may alias x).
void log_softmax(const Tensor& x, const Tensor& out);
// The same for one row of n values, on the calling thread (for a caller that works row by row
// while the row is in cache, as a search step does).
void log_softmax_row(const float* row, float* out, int64_t n);
// Combining the log-probabilities of an ensemble's models, element by element (out may alias
// one of xs): the log of the mean of their probabilities (-inf where every x is -inf) ...
void log_mean_exp(std::span<const Tensor> xs, const Tensor& out);
// ... or the mean of the log-probabilities (a normalised product of experts without its
// normaliser: the sum over a sentence is the mean of the models' log-probabilities of it).
void mean(std::span<const Tensor> xs, const Tensor& out);

// Label-smoothed cross-entropy over rows of logits [n, V] with I32 targets [n]; rows whose
// target is pad_id are ignored. The smoothed target puts 1 - eps + eps/V on the label and eps/V
// on every class (as torch.nn.functional.cross_entropy's label_smoothing).
struct CrossEntropySums {
  double loss = 0;  // sum of smoothed losses over counted rows
  double nll = 0;   // sum of -log p(label), for perplexity
  int64_t tokens = 0;
  // consistency_loss_train: the sum over row pairs of (KL(p||q) + KL(q||p)) / 2.
  double consistency = 0;

  CrossEntropySums& operator+=(const CrossEntropySums& o) {
    loss += o.loss;
    nll += o.nll;
    tokens += o.tokens;
    consistency += o.consistency;
    return *this;
  }
};
// Saves each row's log-sum-exp in lse [n].
CrossEntropySums cross_entropy_forward(const Tensor& logits, const Tensor& targets, int pad_id,
                                       float eps, const Tensor& lse);
// Overwrites logits with grad_scale * d(loss)/d(logits) (zero on ignored rows); or, when
// grad_bf16 (BF16, logits' size) is given, writes that gradient there rounded to bf16 and leaves
// logits alone (a bf16 model's output projection reads no fp32 copy of it).
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int pad_id, float eps,
                            const Tensor& lse, float grad_scale,
                            const Tensor& grad_bf16 = Tensor());
// Training's forward and backward of the loss in one pass over the logits, each row's gradient
// written while the row is in cache: the sums of cross_entropy_forward, and the gradient of
// cross_entropy_backward (over the logits, or into grad_bf16).
CrossEntropySums cross_entropy_train(const Tensor& logits, const Tensor& targets, int pad_id,
                                     float eps, float grad_scale,
                                     const Tensor& grad_bf16 = Tensor());
// R-Drop's loss (Liang et al., 2021) over logits [2n, V] whose rows r and r + n saw the same
// target (targets[r] == targets[r + n]) through two dropout masks: the rows' label-smoothed
// cross-entropy (the sums above) plus alpha times each pair's (KL(p||q) + KL(q||p)) / 2 (their
// sum in `consistency`). Writes grad_scale * the gradient of that total as cross_entropy_train.
CrossEntropySums consistency_loss_train(const Tensor& logits, const Tensor& targets, int pad_id,
                                        float eps, float alpha, float grad_scale,
                                        const Tensor& grad_bf16 = Tensor());

// Adam with bias correction at step t (1-based): m, v updated, param -= lr * mhat / (sqrt(vhat) +
// eps). When param_bf16 (BF16, param's size) is given, it receives the updated param rounded to
// bf16 in the same pass: a bf16-training model's GEMM copy, refreshed once per update.
void adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                 float lr, float beta1, float beta2, float eps, int64_t t,
                 const Tensor& param_bf16 = Tensor());

}  // namespace transduce::ops
