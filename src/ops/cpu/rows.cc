// Whole-row operations: compacting rows (sentences leaving a decoding batch), log-softmax over
// rows, and combining an ensemble's log-probabilities.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"

namespace transduce::ops {

Tensor compact_rows(const Tensor& t, const Tensor& rows) {
  require_cpu({&t, &rows});
  TD_CHECK(t.ndim() >= 1 && t.is_contiguous(), "compact_rows of {}", t.shape().str());
  const int64_t m = rows.numel(), row_bytes = t.dim(0) ? t.nbytes() / t.dim(0) : 0;
  const int32_t* idx = rows.i32();
  char* p = static_cast<char*>(t.raw());
  for (int64_t i = 0; i < m; ++i) {
    TD_CHECK(idx[i] >= (i == 0 ? 0 : idx[i - 1] + 1) && idx[i] < t.dim(0),
             "compact_rows: row {} at {} of {} rows, not increasing", idx[i], i, t.dim(0));
    // Sequential and increasing: row idx[i] >= i has not been overwritten yet.
    if (idx[i] != i) std::memcpy(p + i * row_bytes, p + idx[i] * row_bytes, row_bytes);
  }
  return t.slice_rows(0, m);
}

void log_softmax_row(const float* row, float* out, int64_t n) {
  float mx = row[0];
#pragma omp simd reduction(max : mx)
  for (int64_t j = 1; j < n; ++j) mx = std::max(mx, row[j]);
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) sum += fast_exp(row[j] - mx);
  const float lse = mx + std::log(sum);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = row[j] - lse;
}

void log_softmax(const Tensor& x, const Tensor& out) {
  require_cpu({&x, &out});
  TD_CHECK(x.shape() == out.shape(), "log_softmax {} -> {}", x.shape().str(), out.shape().str());
  const int64_t n = x.cols();
  const float* px = x.f32();
  float* po = out.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(x.numel()))
  for (int64_t r = 0; r < x.rows(); ++r) log_softmax_row(px + r * n, po + r * n, n);
}

namespace {

void check_same_shapes(std::span<const Tensor> xs, const Tensor& out, const char* op) {
  TD_CHECK(!xs.empty(), "{} of no tensors", op);
  for (const Tensor& x : xs) {
    require_cpu({&x});
    TD_CHECK(x.shape() == out.shape() && x.is_contiguous(), "{}: {} -> {}", op, x.shape().str(),
             out.shape().str());
  }
  require_cpu({&out});
}

}  // namespace

void log_mean_exp(std::span<const Tensor> xs, const Tensor& out) {
  check_same_shapes(xs, out, "log_mean_exp");
  const int64_t n = out.numel(), m = static_cast<int64_t>(xs.size());
  const float log_m = std::log(static_cast<float>(m));
  std::vector<const float*> in;
  for (const Tensor& x : xs) in.push_back(x.f32());
  float* po = out.f32();
  constexpr int64_t kBlock = 1024;
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * m))
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    float top[kBlock], sum[kBlock];
    for (int64_t i = b; i < e; ++i) top[i - b] = in[0][i];
    for (int64_t k = 1; k < m; ++k)
#pragma omp simd
      for (int64_t i = b; i < e; ++i) top[i - b] = std::max(top[i - b], in[k][i]);
    for (int64_t i = b; i < e; ++i) sum[i - b] = 0;
    for (int64_t k = 0; k < m; ++k)
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        // Where top is -inf (every member bans the token) the difference is NaN: skipped below.
        const float d = in[k][i] - top[i - b];
        sum[i - b] += d == d ? fast_exp(d) : 0.0f;
      }
    for (int64_t i = b; i < e; ++i) {
      const float t = top[i - b];
      po[i] = std::isfinite(t) ? t + std::log(sum[i - b]) - log_m : t;
    }
  }
}

void mean(std::span<const Tensor> xs, const Tensor& out) {
  check_same_shapes(xs, out, "mean");
  const int64_t n = out.numel(), m = static_cast<int64_t>(xs.size());
  const float inv = 1.0f / static_cast<float>(m);
  std::vector<const float*> in;
  for (const Tensor& x : xs) in.push_back(x.f32());
  float* po = out.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * m))
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int64_t k = 0; k < m; ++k) s += in[k][i];
    po[i] = s * inv;
  }
}

}  // namespace transduce::ops
