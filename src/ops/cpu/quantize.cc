// Symmetric int8 quantization of rows, for the int8 products (gemm_int8.cc).
#include <cmath>
#include <cstring>

#include "ops/cpu/check.h"
#include "ops/cpu/quantize_vector.h"
#include "ops/ops.h"

namespace transduce::ops {

void quantize_rows(const Tensor& x, const Tensor& q, const Tensor& scales) {
  require_cpu({&x, &q, &scales});
  const int64_t rows = x.rows(), cols = x.cols();
  TD_CHECK(q.dtype() == DType::I8 && q.numel() == x.numel() && scales.numel() == rows,
           "quantize_rows of {} into {} {} with scales {}", x.shape().str(), dtype_name(q.dtype()),
           q.shape().str(), scales.shape().str());
  const float* px = x.f32();
  int8_t* pq = q.i8();
  float* ps = scales.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(rows * cols))
  for (int64_t r = 0; r < rows; ++r) ps[r] = quantize_vector(px + r * cols, cols, pq + r * cols);
}

Int8Matrix quantize_matrix(const Tensor& w) {
  require_cpu({&w});
  TD_CHECK(w.ndim() == 2, "quantize_matrix of {}: a matrix [n, k]", w.shape().str());
  Int8Matrix m;
  m.q = Tensor::empty(w.shape(), DType::I8);
  m.scales = Tensor::empty({w.dim(0)});
  quantize_rows(w, m.q, m.scales);
  return m;
}

void store_heads(const Tensor& src, int64_t heads, const HeadVectors& dst) {
  const Tensor& d = dst.data;
  require_cpu({&src, &d});
  const int64_t n = src.rows(), width = src.cols();
  TD_CHECK(src.dtype() == DType::F32 && heads > 0 && width % heads == 0 && d.cols() == width &&
               d.rows() >= n &&
               (d.dtype() == DType::F32 || d.dtype() == DType::BF16 || d.dtype() == DType::I8),
           "store_heads of {} ({} heads) into {} {}", src.shape().str(), heads,
           dtype_name(d.dtype()), d.shape().str());
  if (d.dtype() == DType::F32) {
    std::memcpy(d.raw(), src.raw(), static_cast<size_t>(src.nbytes()));
    return;
  }
  if (d.dtype() == DType::BF16) {
    to_bf16(src, Tensor::borrow(d.raw(), src.shape(), DType::BF16));
    return;
  }
  require_cpu({&dst.scales});
  TD_CHECK(dst.scales.dtype() == DType::F32 && dst.scales.numel() * width == d.numel() * heads,
           "store_heads into {} with scales {}", d.shape().str(), dst.scales.shape().str());
  // Each head's vector is a row of its own.
  const int64_t vectors = n * heads, dh = width / heads;
  quantize_rows(src.reshape({vectors, dh}), Tensor::borrow(d.i8(), {vectors, dh}, DType::I8),
                Tensor::borrow(dst.scales.f32(), {vectors}));
}

}  // namespace transduce::ops
