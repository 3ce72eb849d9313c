// Matrix products through OpenBLAS (F32) or oneDNN (BF16, gemm_bf16.cc).
#include <cblas.h>

#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/gemm_bf16.h"
#include "ops/ops.h"

namespace transduce::ops {

void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c,
          float alpha, float beta) {
  const PhaseScope phase(Phase::kProducts);
  require_cpu({&a, &b, &c});
  const int64_t m = trans_a ? a.cols() : a.rows();
  const int64_t k = trans_a ? a.rows() : a.cols();
  const int64_t kb = trans_b ? b.cols() : b.rows();
  const int64_t n = trans_b ? b.rows() : b.cols();
  TD_CHECK(k == kb && c.rows() == m && c.cols() == n, "gemm shapes {}{} x {}{} -> {}",
           a.shape().str(), trans_a ? "^T" : "", b.shape().str(), trans_b ? "^T" : "",
           c.shape().str());
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS would reject the zero leading dimension of an empty A or B
    beta == 0.0f ? c.fill_zero() : scale(c, beta);
    return;
  }
  if (a.dtype() == DType::BF16 || b.dtype() == DType::BF16) {
    gemm_bf16(a, trans_a, b, trans_b, c, m, n, k, alpha, beta);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a.f32(), a.cols(), b.f32(),
              b.cols(), beta, c.f32(), c.cols());
}

void linear_product(const Tensor& x, const Tensor& w, const Tensor& bias, bool relu,
                    const Tensor& y) {
  const PhaseScope phase(Phase::kProducts);
  require_cpu({&x, &w, &bias, &y});
  TD_CHECK(w.cols() == x.cols() && y.rows() == x.rows() && y.cols() == w.rows() &&
               bias.numel() == w.rows(),
           "linear product {} x {}^T + bias {} -> {}", x.shape().str(), w.shape().str(),
           bias.shape().str(), y.shape().str());
  if (y.numel() == 0) return;  // no rows (or no outputs): nothing for the library to do
  if (x.dtype() == DType::BF16 || w.dtype() == DType::BF16) {
    linear_product_bf16(x, w, bias, relu, y);
    return;
  }
  TD_CHECK(y.dtype() == DType::F32, "an fp32 linear product writes F32, not {}",
           dtype_name(y.dtype()));
  fill_rows(y, bias);
  gemm(x, false, w, true, y, 1.0f, 1.0f);
  if (relu) relu_forward(y, y);
}

void gemm_grid(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const MatrixGrid& a, const MatrixGrid& b, float beta, const MatrixGrid& c,
               int64_t outer, int64_t inner) {
  const PhaseScope phase(Phase::kProducts);
  require_cpu({&a.t, &b.t, &c.t});
  const float* pa = a.t.f32() + a.offset;
  const float* pb = b.t.f32() + b.offset;
  float* pc = c.t.f32() + c.offset;
  const int64_t count = outer * inner;
  // Many small products: one per thread, each single-threaded inside BLAS.
#pragma omp parallel for schedule(dynamic) if (parallel_worth_it(count * m * n * k))
  for (int64_t idx = 0; idx < count; ++idx) {
    const int64_t o = idx / inner, i = idx % inner;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha,
                pa + o * a.stride_outer + i * a.stride_inner, a.ld,
                pb + o * b.stride_outer + i * b.stride_inner, b.ld, beta,
                pc + o * c.stride_outer + i * c.stride_inner, c.ld);
  }
}

std::string fp32_gemm_library() {
  // openblas_get_config() reads like "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX
  // MAX_THREADS=64".
  std::string config = openblas_get_config();
  const size_t space = config.find(' ', config.find(' ') + 1);
  return fmt::format("{} ({})", config.substr(0, space), openblas_get_corename());
}

}  // namespace transduce::ops
