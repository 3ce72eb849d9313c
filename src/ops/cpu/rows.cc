// Whole-row operations: gathering rows (beam reordering) and log-softmax over rows.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/ops.h"

namespace transduce::ops {

void gather_rows(const Tensor& src, const Tensor& rows, const Tensor& dst, int64_t prefix) {
  require_cpu({&src, &rows, &dst});
  auto row_size = [](const Tensor& t) {
    int64_t n = 1;
    for (int i = 1; i < t.ndim(); ++i) n *= t.dim(i);
    return n;
  };
  TD_CHECK(src.ndim() >= 1 && dst.ndim() == src.ndim() && dst.dim(0) == rows.numel() &&
               row_size(src) == row_size(dst) && src.dtype() == dst.dtype(),
           "gather_rows {} by {} into {}", src.shape().str(), rows.shape().str(),
           dst.shape().str());
  const int64_t n = src.dim(0), m = rows.numel();
  const int64_t row_elems = row_size(src);
  const int64_t copy = prefix < 0 ? row_elems : std::min(prefix, row_elems);
  const size_t elem = dtype_size(src.dtype());
  const int32_t* idx = rows.i32();
  for (int64_t i = 0; i < m; ++i) TD_CHECK(idx[i] >= 0 && idx[i] < n, "row {} of {}", idx[i], n);
  const char* ps = static_cast<const char*>(src.raw());
  char* pd = static_cast<char*>(dst.raw());
#pragma omp parallel for schedule(static) if (parallel_worth_it(m * copy))
  for (int64_t i = 0; i < m; ++i)
    std::memcpy(pd + i * row_elems * elem, ps + idx[i] * row_elems * elem, copy * elem);
}

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

void write_position(const Tensor& src, const Tensor& cache, int64_t position) {
  require_cpu({&src, &cache});
  TD_CHECK(cache.ndim() == 3 && src.dim(0) == cache.dim(0) &&
               src.numel() == cache.dim(0) * cache.dim(2) && 0 <= position &&
               position < cache.dim(1),
           "write_position {} into {} at {}", src.shape().str(), cache.shape().str(), position);
  const int64_t n = cache.dim(0), c = cache.dim(1), w = cache.dim(2);
  const float* ps = src.f32();
  float* pc = cache.f32();
  for (int64_t r = 0; r < n; ++r)
    std::memcpy(pc + (r * c + position) * w, ps + r * w, static_cast<size_t>(w) * sizeof(float));
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
