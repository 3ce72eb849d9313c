// Pointwise ops: ReLU, dropout, additions, bias.
#include <omp.h>

#include <type_traits>

#include "core/bf16.h"
#include "ops/cpu/check.h"
#include "ops/cpu/dropout_keep.h"
#include "ops/cpu/scratch.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {
void same_shape(const Tensor& a, const Tensor& b, const char* op) {
  TD_CHECK(a.numel() == b.numel(), "{}: {} vs {}", op, a.shape().str(), b.shape().str());
}
}  // namespace

void relu_forward(const Tensor& x, const Tensor& y) {
  require_cpu({&x, &y});
  same_shape(x, y, "relu");
  const float* px = x.f32();
  float* py = y.f32();
  const int64_t n = x.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) py[i] = px[i] > 0.0f ? px[i] : 0.0f;
}

namespace {

// Whether a bf16 number is above zero: its bits 0x0001 (the least subnormal) to 0x7f80
// (infinity): sign bit clear, not zero, not NaN.
inline bool bf16_above_zero(uint16_t bits) {
  return bits - 1u < 0x7f80u;
}

}  // namespace

void relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dx) {
  require_cpu({&y, &dy, &dx});
  same_shape(y, dy, "relu_backward");
  same_shape(y, dx, "relu_backward");
  const float* pdy = dy.f32();
  float* pdx = dx.f32();
  const int64_t n = y.numel();
  if (y.dtype() == DType::BF16) {
    const uint16_t* py = y.bf16();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
    for (int64_t i = 0; i < n; ++i) pdx[i] = bf16_above_zero(py[i]) ? pdy[i] : 0.0f;
    return;
  }
  const float* py = y.f32();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) pdx[i] = py[i] > 0.0f ? pdy[i] : 0.0f;
}

namespace {

// y = residual + dropout(x) (residual may be null: y = dropout(x)), the mask saved.
void dropout_rows(const float* residual, const float* px, float* py, uint8_t* pm, int64_t n,
                  float p, uint64_t seed, uint64_t stream) {
  const DropoutKeep rule(p, seed, stream);
  const float inv_keep = rule.inv_keep();
#pragma omp parallel for schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t keep = rule.keep(static_cast<uint64_t>(i));
    pm[i] = keep;
    const float dropped = keep ? px[i] * inv_keep : 0.0f;
    py[i] = residual ? residual[i] + dropped : dropped;
  }
}

}  // namespace

void dropout_forward(const Tensor& x, const Tensor& y, const Tensor& mask, float p, uint64_t seed,
                     uint64_t stream) {
  require_cpu({&x, &y});
  same_shape(x, y, "dropout");
  if (p == 0.0f) {
    if (y.f32() != x.f32()) y.copy_from(x);
    return;
  }
  require_cpu({&mask});
  same_shape(x, mask, "dropout mask");
  dropout_rows(nullptr, x.f32(), y.f32(), mask.u8(), x.numel(), p, seed, stream);
}

void dropout_add(const Tensor& residual, const Tensor& x, const Tensor& y, const Tensor& mask,
                 float p, uint64_t seed, uint64_t stream) {
  if (p == 0.0f) return add(residual, x, y);
  require_cpu({&residual, &x, &y, &mask});
  same_shape(x, y, "dropout_add");
  same_shape(residual, y, "dropout_add");
  same_shape(x, mask, "dropout mask");
  dropout_rows(residual.f32(), x.f32(), y.f32(), mask.u8(), x.numel(), p, seed, stream);
}

void dropout_backward(const Tensor& dy, const Tensor& mask, float p, const Tensor& dx) {
  require_cpu({&dy, &dx});
  same_shape(dy, dx, "dropout_backward");
  const float* pdy = dy.f32();
  float* pdx = dx.f32();
  const int64_t n = dy.numel();
  if (p == 0.0f) {
    if (pdx != pdy) dx.copy_from(dy);
    return;
  }
  require_cpu({&mask});
  const uint8_t* pm = mask.u8();
  const float inv_keep = DropoutKeep::kept_scale(p);
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) pdx[i] = pm[i] ? pdy[i] * inv_keep : 0.0f;
}

void add(const Tensor& a, const Tensor& b, const Tensor& out) {
  require_cpu({&a, &b, &out});
  same_shape(a, b, "add");
  same_shape(a, out, "add");
  const float *pa = a.f32(), *pb = b.f32();
  float* po = out.f32();
  const int64_t n = a.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
}

void axpy(float alpha, const Tensor& b, const Tensor& a) {
  require_cpu({&a, &b});
  same_shape(a, b, "axpy");
  const float* pb = b.f32();
  float* pa = a.f32();
  const int64_t n = a.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) pa[i] += alpha * pb[i];
}

void scale(const Tensor& x, float alpha) {
  require_cpu({&x});
  float* px = x.f32();
  const int64_t n = x.numel();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(n))
  for (int64_t i = 0; i < n; ++i) px[i] *= alpha;
}

void fill_rows(const Tensor& x, const Tensor& bias) {
  require_cpu({&x, &bias});
  const int64_t n = x.cols();
  TD_CHECK(bias.numel() == n, "fill_rows {} with {}", x.shape().str(), bias.shape().str());
  float* px = x.f32();
  const float* pb = bias.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(x.numel()))
  for (int64_t r = 0; r < x.rows(); ++r) std::copy(pb, pb + n, px + r * n);
}

namespace {

// Rows r0..r1-1 of bias_grad into acc: Relu is the type of the ReLU's output (void: none), and
// ToBf16 writes the rounded gradient.
template <class Relu, bool ToBf16>
void bias_grad_rows(const float* dy, const void* relu_out, uint16_t* out, int64_t r0, int64_t r1,
                    int64_t n, float* acc) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* row = dy + r * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      float g = row[j];
      if constexpr (std::is_same_v<Relu, float>) {
        g = static_cast<const float*>(relu_out)[r * n + j] > 0.0f ? g : 0.0f;
      } else if constexpr (std::is_same_v<Relu, uint16_t>) {
        g = bf16_above_zero(static_cast<const uint16_t*>(relu_out)[r * n + j]) ? g : 0.0f;
      }
      acc[j] += g;
      if constexpr (ToBf16) out[r * n + j] = float_to_bf16(g);
    }
  }
}

template <class Relu>
void bias_grad_rows(const float* dy, const void* relu_out, uint16_t* out, int64_t r0, int64_t r1,
                    int64_t n, float* acc) {
  if (out)
    bias_grad_rows<Relu, true>(dy, relu_out, out, r0, r1, n, acc);
  else
    bias_grad_rows<Relu, false>(dy, relu_out, out, r0, r1, n, acc);
}

}  // namespace

void bias_grad(const Tensor& dy, const Tensor& dbias, const Tensor& dy_bf16,
               const Tensor& relu_out) {
  require_cpu({&dy, &dbias});
  const int64_t n = dy.cols(), rows = dy.rows();
  TD_CHECK(dbias.numel() == n && dy.dtype() == DType::F32, "bias_grad {} {} -> {}",
           dtype_name(dy.dtype()), dy.shape().str(), dbias.shape().str());
  uint16_t* out = nullptr;
  if (dy_bf16.defined()) {
    require_cpu({&dy_bf16});
    TD_CHECK(dy_bf16.dtype() == DType::BF16 && dy_bf16.numel() == dy.numel(),
             "bias_grad's rounded gradient: {} {} for {}", dtype_name(dy_bf16.dtype()),
             dy_bf16.shape().str(), dy.shape().str());
    out = dy_bf16.bf16();
  }
  const DType relu = relu_out.defined() ? relu_out.dtype() : DType::U8;
  if (relu_out.defined()) {
    require_cpu({&relu_out});
    TD_CHECK((relu == DType::F32 || relu == DType::BF16) && relu_out.numel() == dy.numel(),
             "bias_grad through a ReLU output {} {} for {}", dtype_name(relu),
             relu_out.shape().str(), dy.shape().str());
  }
  const int nt = parallel_worth_it(rows * n) ? omp_get_max_threads() : 1;
  float* partial = zeroed_scratch(static_cast<size_t>(nt) * n);
  const float* pdy = dy.f32();
  const void* pr = relu_out.defined() ? relu_out.raw() : nullptr;
#pragma omp parallel num_threads(nt)
  {
    float* acc = partial + static_cast<size_t>(omp_get_thread_num()) * n;
    // The rows of schedule(static): one contiguous share a thread.
    const int threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
    if (relu == DType::F32)
      bias_grad_rows<float>(pdy, pr, out, r0, r1, n, acc);
    else if (relu == DType::BF16)
      bias_grad_rows<uint16_t>(pdy, pr, out, r0, r1, n, acc);
    else
      bias_grad_rows<void>(pdy, pr, out, r0, r1, n, acc);
  }
  float* db = dbias.f32();
  for (int t = 0; t < nt; ++t)
    for (int64_t j = 0; j < n; ++j) db[j] += partial[static_cast<size_t>(t) * n + j];
}

}  // namespace transduce::ops
