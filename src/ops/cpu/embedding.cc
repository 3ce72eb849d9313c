// Embedding lookup and its gradient, and positional tables added to [batch, len, d] activations.
#include <omp.h>

#include "ops/cpu/check.h"
#include "ops/ops.h"

namespace transduce::ops {

void embedding_gather(const Tensor& table, const Tensor& ids, float scale, const Tensor& out,
                      const Tensor& row_scales) {
  require_cpu({&table, &ids, &out});
  const int64_t d = table.cols(), vocab = table.rows(), n = ids.numel();
  const bool int8 = table.dtype() == DType::I8;
  TD_CHECK(out.rows() == n && out.cols() == d, "embedding_gather out {} for {} ids, d {}",
           out.shape().str(), n, d);
  TD_CHECK(
      int8 ? row_scales.defined() && row_scales.dtype() == DType::F32 && row_scales.numel() == vocab
           : table.dtype() == DType::F32 && !row_scales.defined(),
      "embedding_gather from a {} table {} with scales {}", dtype_name(table.dtype()),
      table.shape().str(), row_scales.defined() ? row_scales.shape().str() : "none");
  const int32_t* pid = ids.i32();
  for (int64_t r = 0; r < n; ++r)
    if (pid[r] < 0 || pid[r] >= vocab)
      fail("token id {} at position {} is outside the vocabulary of {}", pid[r], r, vocab);
  float* po = out.f32();
  if (int8) {
    require_cpu({&row_scales});
    const int8_t* pt = table.i8();
    const float* ps = row_scales.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * d))
    for (int64_t r = 0; r < n; ++r) {
      const int8_t* src = pt + static_cast<int64_t>(pid[r]) * d;
      const float s = ps[pid[r]] * scale;
      float* dst = po + r * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) dst[j] = static_cast<float>(src[j]) * s;
    }
    return;
  }
  const float* pt = table.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * d))
  for (int64_t r = 0; r < n; ++r) {
    const float* src = pt + static_cast<int64_t>(pid[r]) * d;
    float* dst = po + r * d;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) dst[j] = src[j] * scale;
  }
}

void embedding_scatter_add(const Tensor& dout, const Tensor& ids, float scale,
                           const Tensor& dtable) {
  require_cpu({&dout, &ids, &dtable});
  const int64_t d = dtable.cols(), n = ids.numel();
  TD_CHECK(dout.rows() == n && dout.cols() == d, "embedding_scatter_add shapes");
  const int32_t* pid = ids.i32();
  for (int64_t r = 0; r < n; ++r)
    if (pid[r] < 0 || pid[r] >= dtable.rows())
      fail("token id {} at position {} is outside the vocabulary of {}", pid[r], r, dtable.rows());
  const float* pd = dout.f32();
  float* pt = dtable.f32();
  // Rows may repeat ids, so threads split the columns rather than the rows.
#pragma omp parallel if (parallel_worth_it(n * d))
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t c0 = d * t / nt, c1 = d * (t + 1) / nt;
    for (int64_t r = 0; r < n; ++r) {
      float* dst = pt + static_cast<int64_t>(pid[r]) * d;
      const float* src = pd + r * d;
      for (int64_t j = c0; j < c1; ++j) dst[j] += src[j] * scale;
    }
  }
}

void add_positions(const Tensor& x, const Tensor& table, int64_t offset) {
  require_cpu({&x, &table});
  TD_CHECK(x.ndim() == 3 && x.dim(2) == table.cols(), "add_positions {} + table {}",
           x.shape().str(), table.shape().str());
  const int64_t batch = x.dim(0), len = x.dim(1), d = x.dim(2);
  if (offset < 0 || offset + len > table.rows())
    fail("position {} is past the model's {} positions", offset + len - 1, table.rows());
  float* px = x.f32();
  const float* pt = table.f32() + offset * d;
#pragma omp parallel for schedule(static) if (parallel_worth_it(batch * len * d))
  for (int64_t r = 0; r < batch * len; ++r) {
    float* row = px + r * d;
    const float* pos = pt + (r % len) * d;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) row[j] += pos[j];
  }
}

void positions_grad(const Tensor& dx, const Tensor& dtable, int64_t offset) {
  require_cpu({&dx, &dtable});
  TD_CHECK(dx.ndim() == 3 && dx.dim(2) == dtable.cols() && offset >= 0 &&
               offset + dx.dim(1) <= dtable.rows(),
           "positions_grad {} into {}", dx.shape().str(), dtable.shape().str());
  const int64_t batch = dx.dim(0), len = dx.dim(1), d = dx.dim(2);
  const float* px = dx.f32();
  float* pt = dtable.f32() + offset * d;
#pragma omp parallel for schedule(static) if (parallel_worth_it(batch * len * d))
  for (int64_t l = 0; l < len; ++l)
    for (int64_t b = 0; b < batch; ++b) {
      const float* row = px + (b * len + l) * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) pt[l * d + j] += row[j];
    }
}

}  // namespace transduce::ops
