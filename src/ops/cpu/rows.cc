// Whole-row operations: compacting rows (sentences leaving a decoding batch) and log-softmax over
// rows.
#include <algorithm>
#include <cmath>
#include <cstring>

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

void log_softmax(const Tensor& x, const Tensor& out) {
  require_cpu({&x, &out});
  TD_CHECK(x.shape() == out.shape(), "log_softmax {} -> {}", x.shape().str(), out.shape().str());
  const int64_t n = x.cols();
  const float* px = x.f32();
  float* po = out.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(x.numel()))
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* row = px + r * n;
    float mx = row[0];
    for (int64_t j = 1; j < n; ++j) mx = std::max(mx, row[j]);
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += fast_exp(row[j] - mx);
    const float lse = mx + std::log(sum);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) po[r * n + j] = row[j] - lse;
  }
}

}  // namespace transduce::ops
