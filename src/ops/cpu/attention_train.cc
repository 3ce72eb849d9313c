// Fused training attention (ops/attention_train.h). A pair's products run through one
// register-blocked kernel, C = A B with B's rows in vectors and A's entries broadcast, on copies
// of the operands padded to whole vectors in the thread's scratch; A may be read transposed in
// place. This file is compiled with floating-point contraction, so each multiply-add is one FMA.
#include "ops/attention_train.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/softmax_rows.h"
#include "ops/ops.h"
#include "ops/visible_keys.h"

namespace transduce::ops {

namespace {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 8;
#endif
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

// Rows of C computed at once: with two vectors of columns, 12 accumulators, two B vectors and a
// broadcast fit AVX2's 16 registers.
constexpr int kRowsAtOnce = 6;

int64_t padded(int64_t n) {
  return (n + kLanes - 1) / kLanes * kLanes;
}

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) {
  std::memcpy(p, &v, sizeof v);
}

// A is read at a[i * a_row + k * a_col]: a_col == 1 is A itself, a_row == 1 its transpose.
struct Operand {
  const float* a;
  int64_t a_row, a_col;
};

// C[i][J vectors] = alpha * sum_k A(i, k) B[k][J vectors] for R rows.
template <int R, int J>
void block(const Operand& A, int64_t kd, float alpha, const float* b, int64_t ldb, float* c,
           int64_t ldc) {
  Vec acc[R][J] = {};
  for (int64_t k = 0; k < kd; ++k) {
    Vec bv[J];
    for (int j = 0; j < J; ++j) bv[j] = load(b + k * ldb + j * kLanes);
    for (int r = 0; r < R; ++r) {
      const float x = A.a[r * A.a_row + k * A.a_col];
      for (int j = 0; j < J; ++j) acc[r][j] += x * bv[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) store(c + r * ldc + j * kLanes, acc[r][j] * alpha);
}

template <int R>
void row_block(const Operand& A, int64_t kd, int64_t n, float alpha, const float* b, int64_t ldb,
               float* c, int64_t ldc) {
  int64_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) block<R, 2>(A, kd, alpha, b + j, ldb, c + j, ldc);
  if (j < n) block<R, 1>(A, kd, alpha, b + j, ldb, c + j, ldc);
}

// row_block<R> for R = 1 .. kRowsAtOnce.
using RowBlock = void (*)(const Operand&, int64_t, int64_t, float, const float*, int64_t, float*,
                          int64_t);
constexpr RowBlock kRowBlocks[kRowsAtOnce] = {row_block<1>, row_block<2>, row_block<3>,
                                              row_block<4>, row_block<5>, row_block<6>};

// C [m, n] = alpha * A [m, kd] B [kd, n]; n is a multiple of kLanes, B's rows and C's rows hold
// n floats at least.
void product(int64_t m, int64_t n, int64_t kd, float alpha, Operand A, const float* b, int64_t ldb,
             float* c, int64_t ldc) {
  // Blocks of nearly equal rows (25 rows: five of 5, not four of 6 and one of 1): a block's
  // cost is mostly its loads of B, whatever its rows.
  const int64_t blocks = (m + kRowsAtOnce - 1) / kRowsAtOnce;
  for (int64_t block = 0, i = 0; block < blocks; ++block) {
    const int64_t rows = m / blocks + (block < m % blocks ? 1 : 0);
    const Operand Ai{A.a + i * A.a_row, A.a_row, A.a_col};
    float* ci = c + i * ldc;
    i += rows;
    kRowBlocks[rows - 1](Ai, kd, n, alpha, b, ldb, ci, ldc);
  }
}

// n floats from src to dst, whole vectors then the rest: rows of a head are a few dozen floats,
// where a call to memmove per row costs more than the copy.
void copy_floats(const float* src, int64_t n, float* dst) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) store(dst + j, load(src + j));
  for (; j < n; ++j) dst[j] = src[j];
}

// A [rows, cols] at src (rows ld apart) into dst [rows, padded(cols)], the padding zeroed.
void copy_padded(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  const int64_t width = padded(cols);
  for (int64_t r = 0; r < rows; ++r) {
    copy_floats(src + r * ld, cols, dst + r * width);
    for (int64_t j = cols; j < width; ++j) dst[r * width + j] = 0.0f;
  }
}

// The transpose of A [rows, cols] at src (rows ld apart) into dst [cols, padded(rows)].
void transpose_padded(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  const int64_t width = padded(rows);
  for (int64_t c = 0; c < cols; ++c) std::fill(dst + c * width + rows, dst + (c + 1) * width, 0.f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * width + r] = src[r * ld + c];
}

// The first `cols` floats of `rows` rows from src (rows src_ld apart) to dst (rows dst_ld apart).
void copy_rows(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
               int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) copy_floats(src + r * src_ld, cols, dst + r * dst_ld);
}

// The calling thread's scratch, grown as needed and reused by every pair it runs.
float* pair_scratch(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// Sizes of one call, and where pair (b, h)'s blocks start.
struct Pairs {
  int64_t batch, heads, lq, lk, dk, dv;

  int64_t count() const { return batch * heads; }
  // Row i of head h of sentence b in a [B, L, heads * d] tensor starts at this offset.
  int64_t head_row(int64_t pair, int64_t length, int64_t d) const {
    return (pair / heads) * length * heads * d + (pair % heads) * d;
  }
  int64_t scores(int64_t pair) const { return pair * lq * lk; }
  int64_t work() const { return count() * lq * lk * (dk + dv); }
};

Pairs pairs_of(const Tensor& q, const Tensor& k, const Tensor& v, int64_t heads) {
  TD_CHECK(q.ndim() == 3 && k.ndim() == 3 && v.ndim() == 3 && heads > 0 && q.dim(2) % heads == 0 &&
               v.dim(2) % heads == 0 && k.dim(2) == q.dim(2) && k.dim(0) == q.dim(0) &&
               v.dim(0) == q.dim(0) && v.dim(1) == k.dim(1),
           "attention over queries {} keys {} values {} with {} heads", q.shape().str(),
           k.shape().str(), v.shape().str(), heads);
  return {q.dim(0), heads, q.dim(1), k.dim(1), q.dim(2) / heads, v.dim(2) / heads};
}

}  // namespace

void attention_probabilities(const Tensor& q, const Tensor& k, int64_t heads, float scale,
                             const AttentionMask& mask, const Tensor& probs) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&q, &k, &probs});
  const Pairs p = pairs_of(q, k, k, heads);
  TD_CHECK(probs.numel() == p.count() * p.lq * p.lk, "attention probabilities {} for {} pairs",
           probs.shape().str(), p.count());
  const uint8_t* pad = key_pad_data(mask.key_pad, p.batch, p.lk);
  const int64_t lkp = padded(p.lk);
#pragma omp parallel for schedule(static) if (parallel_worth_it(p.work()))
  for (int64_t pair = 0; pair < p.count(); ++pair) {
    float* kt = pair_scratch(p.dk * lkp + p.lq * lkp);
    float* s = kt + p.dk * lkp;
    transpose_padded(k.f32() + p.head_row(pair, p.lk, p.dk), heads * p.dk, p.lk, p.dk, kt);
    product(p.lq, lkp, p.dk, scale, {q.f32() + p.head_row(pair, p.lq, p.dk), heads * p.dk, 1}, kt,
            lkp, s, lkp);
    const uint8_t* prow = pad ? pad + (pair / heads) * p.lk : nullptr;
    float* out = probs.f32() + p.scores(pair);
    for (int64_t i = 0; i < p.lq; ++i) {
      float* row = s + i * lkp;
      masked_softmax_row(
          row, p.lk, visible_keys(i + mask.causal_offset, p.lk, mask.causal, mask.window), prow);
      copy_floats(row, p.lk, out + i * p.lk);
    }
  }
}

void attention_context(const Tensor& probs, const Tensor& v, int64_t heads, const Tensor& context) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&probs, &v, &context});
  const Pairs p = pairs_of(context, v, v, heads);
  TD_CHECK(probs.numel() == p.count() * p.lq * p.lk && context.dim(2) == v.dim(2),
           "attention context {} from probabilities {} and values {}", context.shape().str(),
           probs.shape().str(), v.shape().str());
  const int64_t dvp = padded(p.dv);
#pragma omp parallel for schedule(static) if (parallel_worth_it(p.work()))
  for (int64_t pair = 0; pair < p.count(); ++pair) {
    float* vp = pair_scratch(p.lk * dvp + p.lq * dvp);
    float* c = vp + p.lk * dvp;
    copy_padded(v.f32() + p.head_row(pair, p.lk, p.dv), heads * p.dv, p.lk, p.dv, vp);
    product(p.lq, dvp, p.lk, 1.0f, {probs.f32() + p.scores(pair), p.lk, 1}, vp, dvp, c, dvp);
    copy_rows(c, dvp, p.lq, p.dv, context.f32() + p.head_row(pair, p.lq, p.dv), heads * p.dv);
  }
}

void attention_backward(const Tensor& dcontext, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& probs, const Tensor& dropped, const Tensor& dropout_keep,
                        float dropout_p, int64_t heads, float scale, const AttentionGradients& g) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&dcontext, &q, &k, &v, &probs, &dropped, &g.dq, &g.dk, &g.dv});
  const Pairs p = pairs_of(q, k, v, heads);
  TD_CHECK(dcontext.shape() == Shape({p.batch, p.lq, heads * p.dv}) && g.dq.shape() == q.shape() &&
               g.dk.shape() == k.shape() && g.dv.shape() == v.shape() &&
               probs.numel() == p.count() * p.lq * p.lk && dropped.numel() == probs.numel(),
           "attention backward: dcontext {}, gradients {} {} {}, probabilities {}",
           dcontext.shape().str(), g.dq.shape().str(), g.dk.shape().str(), g.dv.shape().str(),
           probs.shape().str());
  const uint8_t* keep = nullptr;
  if (dropout_keep.defined()) {
    require_cpu({&dropout_keep});
    TD_CHECK(dropout_keep.numel() == probs.numel(), "attention dropout mask {}",
             dropout_keep.shape().str());
    keep = dropout_keep.u8();
  }
  const float inv_keep = 1.0f / (1.0f - dropout_p);
  const int64_t lkp = padded(p.lk), dkp = padded(p.dk), dvp = padded(p.dv);
  const int64_t ldq = heads * p.dk, ldv = heads * p.dv;
#pragma omp parallel for schedule(static) if (parallel_worth_it(p.work()))
  for (int64_t pair = 0; pair < p.count(); ++pair) {
    // Scratch: dC and Q padded (B operands), V transposed, K padded, d(probs) then d(scores),
    // and one output block.
    float* dc = pair_scratch(p.lq * dvp + p.lq * dkp + p.dv * lkp + p.lk * dkp + p.lq * lkp +
                             std::max(p.lq, p.lk) * std::max(dkp, dvp));
    float* qp = dc + p.lq * dvp;
    float* vt = qp + p.lq * dkp;
    float* kp = vt + p.dv * lkp;
    float* ds = kp + p.lk * dkp;
    float* out = ds + p.lq * lkp;
    const float* dc_src = dcontext.f32() + p.head_row(pair, p.lq, p.dv);
    const int64_t q_at = p.head_row(pair, p.lq, p.dk), k_at = p.head_row(pair, p.lk, p.dk);
    const int64_t v_at = p.head_row(pair, p.lk, p.dv);
    copy_padded(dc_src, ldv, p.lq, p.dv, dc);
    copy_padded(q.f32() + q_at, ldq, p.lq, p.dk, qp);
    transpose_padded(v.f32() + v_at, ldv, p.lk, p.dv, vt);
    copy_padded(k.f32() + k_at, ldq, p.lk, p.dk, kp);
    const float* pr = probs.f32() + p.scores(pair);
    const float* pd = dropped.f32() + p.scores(pair);

    // dV = dropped^T dC.
    product(p.lk, dvp, p.lq, 1.0f, {pd, 1, p.lk}, dc, dvp, out, dvp);
    copy_rows(out, dvp, p.lk, p.dv, g.dv.f32() + v_at, ldv);
    // d(dropped) = dC V^T, through dropout and the softmax into d(scores), scaled.
    product(p.lq, lkp, p.dv, 1.0f, {dc_src, ldv, 1}, vt, lkp, ds, lkp);
    for (int64_t i = 0; i < p.lq; ++i) {
      float* row = ds + i * lkp;
      if (keep) {
        const uint8_t* ki = keep + p.scores(pair) + i * p.lk;
        for (int64_t j = 0; j < p.lk; ++j) row[j] = ki[j] ? row[j] * inv_keep : 0.0f;
      }
      softmax_backward_row(pr + i * p.lk, row, p.lk, scale);
    }
    // dQ = d(scores) K ; dK = d(scores)^T Q.
    product(p.lq, dkp, p.lk, 1.0f, {ds, lkp, 1}, kp, dkp, out, dkp);
    copy_rows(out, dkp, p.lq, p.dk, g.dq.f32() + q_at, ldq);
    product(p.lk, dkp, p.lq, 1.0f, {ds, 1, lkp}, qp, dkp, out, dkp);
    copy_rows(out, dkp, p.lk, p.dk, g.dk.f32() + k_at, ldq);
  }
}

}  // namespace transduce::ops
