// Symmetric int8 quantization of rows, for the int8 products (gemm_int8.cc).
#include <cmath>

#include "ops/cpu/check.h"
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
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * cols;
    int8_t* out = pq + r * cols;
    float largest = 0.0f;
#pragma omp simd reduction(max : largest)
    for (int64_t j = 0; j < cols; ++j) largest = std::max(largest, std::fabs(row[j]));
    ps[r] = largest / 127.0f;
    const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
    // Round half away from zero by truncating |v| + 0.5: |v| <= 127 fits int8, and the
    // truncating conversion vectorises where a call to nearbyint does not. The clamps (selects,
    // not fmin/fmax calls, so that the loop stays vectorised) keep a NaN or infinite input (a
    // broken model) from an undefined conversion.
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      float v = row[j] * inverse;
      v = v > 127.0f ? 127.0f : v;
      v = v < -127.0f ? -127.0f : v;
      v = v == v ? v : 0.0f;
      out[j] = static_cast<int8_t>(static_cast<int32_t>(v + std::copysign(0.5f, v)));
    }
  }
}

Int8Matrix quantize_matrix(const Tensor& w) {
  require_cpu({&w});
  TD_CHECK(w.ndim() == 2, "quantize_matrix of {}: a matrix [n, k]", w.shape().str());
  Int8Matrix m;
  m.q = Tensor::empty(w.shape(), DType::I8);
  m.scales = Tensor::empty({w.dim(0)});
  quantize_rows(w, m.q, m.scales);
  pack_int8(m);
  return m;
}

}  // namespace transduce::ops
