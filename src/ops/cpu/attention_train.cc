// Fused training attention (ops/attention_train.h). A pair's products run through one
// register-blocked kernel, C = A B with B's rows in vectors and A's entries broadcast. B is read
// in place when a head's rows are whole vectors, else from a copy padded to them in the thread's
// scratch, or transposed there a tile at a time; A may be read transposed in place. This file is
// compiled with floating-point contraction, so each multiply-add is one FMA.
#include "ops/attention_train.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <vector>

#include "core/bf16.h"
#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/dropout_keep.h"
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

// A B operand of `cols` columns: read in place when its rows are whole vectors (heads of 32, 64),
// else copied into `scratch` with the padding zeroed. Returns the rows and their distance.
struct Rows {
  const float* data;
  int64_t ld;
};
Rows operand_rows(const float* src, int64_t ld, int64_t rows, int64_t cols, float* scratch) {
  if (cols % kLanes == 0) return {src, ld};
  copy_padded(src, ld, rows, cols, scratch);
  return {scratch, padded(cols)};
}

using Lanes = int32_t __attribute__((vector_size(kLanes * sizeof(int32_t))));

// The index vectors of transpose_tile's rounds: for each block size b, `low[j]` picks the lower
// row's new lane j from the pair (lower, upper), `high[j]` the upper row's.
constexpr int kTileRounds = std::countr_zero(static_cast<unsigned>(kLanes));  // log2
struct TileShuffles {
  Lanes low[kTileRounds], high[kTileRounds];
  TileShuffles() {
    for (int round = 0; round < kTileRounds; ++round)
      for (int j = 0, b = kLanes >> (round + 1); j < kLanes; ++j) {
        low[round][j] = (j & b) ? kLanes + j - b : j;
        high[round][j] = (j & b) ? kLanes + j : j + b;
      }
  }
};
const TileShuffles kTileShuffles;

// t[r][c] becomes t[c][r] for a kLanes x kLanes tile held in vectors: each round swaps the
// off-diagonal b x b blocks of every 2b x 2b block, for b = kLanes / 2 down to 1.
void transpose_tile(Vec (&t)[kLanes]) {
  // Unrolled whole, so that the tile stays in registers.
#pragma GCC unroll 4
  for (int round = 0; round < kTileRounds; ++round) {
    const int b = kLanes >> (round + 1);
#pragma GCC unroll 16
    for (int r = 0; r < kLanes; ++r) {
      if (r & b) continue;
      const Vec lower = t[r], upper = t[r + b];
      t[r] = __builtin_shuffle(lower, upper, kTileShuffles.low[round]);
      t[r + b] = __builtin_shuffle(lower, upper, kTileShuffles.high[round]);
    }
  }
}

// The transpose of A [rows, cols] at src (rows ld apart) into dst [cols, padded(rows)], a tile of
// kLanes x kLanes at a time in registers; the padding is zeroed.
void transpose_padded(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  const int64_t width = padded(rows);
  for (int64_t r0 = 0; r0 < rows; r0 += kLanes) {
    const int64_t tile_rows = std::min(kLanes, rows - r0);
    for (int64_t c0 = 0; c0 < cols; c0 += kLanes) {
      const int64_t tile_cols = std::min(kLanes, cols - c0);
      Vec t[kLanes] = {};
      for (int64_t r = 0; r < tile_rows; ++r) {
        const float* from = src + (r0 + r) * ld + c0;
        if (tile_cols == kLanes) {
          t[r] = load(from);
        } else {
          std::memcpy(&t[r], from, static_cast<size_t>(tile_cols) * sizeof(float));
        }
      }
      transpose_tile(t);
      for (int64_t c = 0; c < tile_cols; ++c) store(dst + (c0 + c) * width + r0, t[c]);
    }
  }
}

// The first `cols` floats of `rows` rows from src (rows src_ld apart) to dst (rows dst_ld apart).
void copy_rows(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
               int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) copy_floats(src + r * src_ld, cols, dst + r * dst_ld);
}

// Asks for the cache lines of `rows` rows of `cols` floats (rows ld apart). A head's rows are a
// few hundred bytes 1 or 2 KB apart, which the hardware prefetchers do not follow; the next pair's
// operands are asked for while this pair computes.
void prefetch_rows(const float* p, int64_t ld, int64_t rows, int64_t cols) {
  constexpr int64_t kLine = 64 / sizeof(float);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; j += kLine) __builtin_prefetch(p + r * ld + j);
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

// C [m, n] = A B (product's arguments) into `dst` (rows ld apart): directly when n is whole
// vectors, else through `block` and a copy of the first n columns.
void product_into(int64_t m, int64_t n, int64_t kd, Operand A, Rows B, float* dst, int64_t ld,
                  float* block) {
  const int64_t np = padded(n);
  if (np == n) {
    product(m, n, kd, 1.0f, A, B.data, B.ld, dst, ld);
    return;
  }
  product(m, np, kd, 1.0f, A, B.data, B.ld, block, np);
  copy_rows(block, np, m, n, dst, ld);
}

// The keys of one sentence over a padded row: 0 for a key a query may see, -inf for a padded key
// and for the padding columns past lk.
void key_bias(const uint8_t* pad, int64_t lk, int64_t lkp, float* bias) {
  constexpr float kHidden = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < lkp; ++j) bias[j] = j < lk && !(pad && pad[j]) ? 0.0f : kHidden;
}

// The lanes of `a` combined by `op` in halves (a tree of log2(kLanes) vector steps, where one
// chain of kLanes scalar steps would wait on each step's latency); `a` is overwritten.
template <class Op>
float reduce_lanes(float (&a)[kLanes], Op op) {
#pragma GCC unroll 4
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
#pragma GCC unroll 8
    for (int64_t l = 0; l < width; ++l) a[l] = op(a[l], a[l + width]);
  return a[0];
}

// row [lkp] of scores (lkp whole vectors) becomes probabilities in place over the keys in `keys`
// that `bias` lets through, 0 elsewhere; a row with no key left becomes zeros. Each pass runs a
// vector at a time with the maximum and the sum kept per lane: a row of a few dozen keys is two
// or three vectors, where a loop of unknown length pays more in its ends than in its body.
void softmax_padded_row(float* row, int64_t lkp, KeyRange keys, const float* bias) {
  constexpr float kHidden = -std::numeric_limits<float>::infinity();
  float lane_max[kLanes];
  std::fill(lane_max, lane_max + kLanes, kHidden);
  for (int64_t j0 = 0; j0 < lkp; j0 += kLanes) {
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      const int64_t j = j0 + l;
      const float s = j >= keys.first && j < keys.end ? row[j] + bias[j] : kHidden;
      row[j] = s;
      lane_max[l] = std::max(lane_max[l], s);
    }
  }
  const float mx = reduce_lanes(lane_max, [](float x, float y) { return std::max(x, y); });
  if (mx == kHidden) {
    std::fill(row, row + lkp, 0.0f);
    return;
  }
  float lane_sum[kLanes] = {};
  for (int64_t j0 = 0; j0 < lkp; j0 += kLanes) {
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      const float e = fast_exp(row[j0 + l] - mx);  // 0 for a hidden key
      row[j0 + l] = e;
      lane_sum[l] += e;
    }
  }
  const float inv = 1.0f / reduce_lanes(lane_sum, [](float x, float y) { return x + y; });
  for (int64_t j0 = 0; j0 < lkp; j0 += kLanes) store(row + j0, load(row + j0) * inv);
}

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
    float* kt = pair_scratch(p.dk * lkp + p.lq * lkp + lkp);
    float* s = kt + p.dk * lkp;
    float* bias = s + p.lq * lkp;
    if (pair + 1 < p.count()) {
      prefetch_rows(q.f32() + p.head_row(pair + 1, p.lq, p.dk), heads * p.dk, p.lq, p.dk);
      prefetch_rows(k.f32() + p.head_row(pair + 1, p.lk, p.dk), heads * p.dk, p.lk, p.dk);
    }
    transpose_padded(k.f32() + p.head_row(pair, p.lk, p.dk), heads * p.dk, p.lk, p.dk, kt);
    product(p.lq, lkp, p.dk, scale, {q.f32() + p.head_row(pair, p.lq, p.dk), heads * p.dk, 1}, kt,
            lkp, s, lkp);
    key_bias(pad ? pad + (pair / heads) * p.lk : nullptr, p.lk, lkp, bias);
    float* out = probs.f32() + p.scores(pair);
    for (int64_t i = 0; i < p.lq; ++i) {
      float* row = s + i * lkp;
      softmax_padded_row(
          row, lkp, visible_keys(i + mask.causal_offset, p.lk, mask.causal, mask.window), bias);
      copy_floats(row, p.lk, out + i * p.lk);
    }
  }
}

void attention_context(const Tensor& probs, const Tensor& v, int64_t heads, const Tensor& context) {
  const PhaseScope phase(Phase::kAttention);
  require_cpu({&probs, &v, &context});
  const Pairs p = pairs_of(context, v, v, heads);
  TD_CHECK(probs.numel() == p.count() * p.lq * p.lk && context.dim(2) == v.dim(2) &&
               v.dtype() == DType::F32 &&
               (context.dtype() == DType::F32 || context.dtype() == DType::BF16),
           "attention context {} {} from probabilities {} and values {}",
           dtype_name(context.dtype()), context.shape().str(), probs.shape().str(),
           v.shape().str());
  const bool bf16 = context.dtype() == DType::BF16;
  const int64_t dvp = padded(p.dv), ldv = heads * p.dv;
#pragma omp parallel for schedule(static) if (parallel_worth_it(p.work()))
  for (int64_t pair = 0; pair < p.count(); ++pair) {
    float* scratch = pair_scratch(p.lk * dvp + p.lq * dvp);
    if (pair + 1 < p.count())
      prefetch_rows(v.f32() + p.head_row(pair + 1, p.lk, p.dv), ldv, p.lk, p.dv);
    const Rows vr = operand_rows(v.f32() + p.head_row(pair, p.lk, p.dv), ldv, p.lk, p.dv, scratch);
    const Operand A{probs.f32() + p.scores(pair), p.lk, 1};
    const int64_t at = p.head_row(pair, p.lq, p.dv);
    float* block = scratch + p.lk * dvp;
    if (bf16) {  // rounded from the block as it is written: the output layer's operand
      product(p.lq, dvp, p.lk, 1.0f, A, vr.data, vr.ld, block, dvp);
      uint16_t* c = context.bf16() + at;
      for (int64_t i = 0; i < p.lq; ++i)
#pragma omp simd
        for (int64_t j = 0; j < p.dv; ++j) c[i * ldv + j] = float_to_bf16(block[i * dvp + j]);
    } else {
      product_into(p.lq, p.dv, p.lk, A, vr, context.f32() + at, ldv, block);
    }
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
  const float inv_keep = DropoutKeep::kept_scale(dropout_p);
  const int64_t lkp = padded(p.lk), dkp = padded(p.dk), dvp = padded(p.dv);
  const int64_t ldq = heads * p.dk, ldv = heads * p.dv;
#pragma omp parallel for schedule(static) if (parallel_worth_it(p.work()))
  for (int64_t pair = 0; pair < p.count(); ++pair) {
    // Scratch: dC, Q and K padded (B operands; not when their rows are whole vectors), V
    // transposed, d(probs) then d(scores), and one output block.
    float* dc = pair_scratch(p.lq * dvp + p.lq * dkp + p.dv * lkp + p.lk * dkp + p.lq * lkp +
                             std::max(p.lq, p.lk) * std::max(dkp, dvp));
    float* qp = dc + p.lq * dvp;
    float* vt = qp + p.lq * dkp;
    float* kp = vt + p.dv * lkp;
    float* ds = kp + p.lk * dkp;
    float* block = ds + p.lq * lkp;
    if (pair + 1 < p.count()) {
      prefetch_rows(dcontext.f32() + p.head_row(pair + 1, p.lq, p.dv), ldv, p.lq, p.dv);
      prefetch_rows(q.f32() + p.head_row(pair + 1, p.lq, p.dk), ldq, p.lq, p.dk);
      prefetch_rows(k.f32() + p.head_row(pair + 1, p.lk, p.dk), ldq, p.lk, p.dk);
      prefetch_rows(v.f32() + p.head_row(pair + 1, p.lk, p.dv), ldv, p.lk, p.dv);
    }
    const float* dc_src = dcontext.f32() + p.head_row(pair, p.lq, p.dv);
    const int64_t q_at = p.head_row(pair, p.lq, p.dk), k_at = p.head_row(pair, p.lk, p.dk);
    const int64_t v_at = p.head_row(pair, p.lk, p.dv);
    const Rows dcr = operand_rows(dc_src, ldv, p.lq, p.dv, dc);
    const Rows qr = operand_rows(q.f32() + q_at, ldq, p.lq, p.dk, qp);
    const Rows kr = operand_rows(k.f32() + k_at, ldq, p.lk, p.dk, kp);
    transpose_padded(v.f32() + v_at, ldv, p.lk, p.dv, vt);
    const float* pr = probs.f32() + p.scores(pair);
    const float* pd = dropped.f32() + p.scores(pair);

    // dV = dropped^T dC.
    product_into(p.lk, p.dv, p.lq, {pd, 1, p.lk}, dcr, g.dv.f32() + v_at, ldv, block);
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
    product_into(p.lq, p.dk, p.lk, {ds, lkp, 1}, kr, g.dq.f32() + q_at, ldq, block);
    product_into(p.lk, p.dk, p.lq, {ds, 1, lkp}, qr, g.dk.f32() + k_at, ldq, block);
  }
}

}  // namespace transduce::ops
