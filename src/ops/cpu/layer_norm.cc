// Layer normalisation over the last axis, forward and backward.
#include <cmath>

#include <omp.h>

#include "ops/cpu/check.h"
#include "ops/cpu/scratch.h"
#include "ops/ops.h"

namespace transduce::ops {

void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                        const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  require_cpu({&x, &gamma, &beta, &y, &mean, &rstd});
  const int64_t n = x.cols(), rows = x.rows();
  TD_CHECK(gamma.numel() == n && beta.numel() == n && y.shape() == x.shape() &&
               mean.numel() == rows && rstd.numel() == rows,
           "layer_norm shapes x {} gamma {}", x.shape().str(), gamma.shape().str());
  const float *px = x.f32(), *g = gamma.f32(), *bt = beta.f32();
  float *py = y.f32(), *pm = mean.f32(), *ps = rstd.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(rows * n))
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * n;
    float* yr = py + r * n;
    // Vectorised sums (partial sums per lane): one chain of n dependent adds would wait on
    // each add's latency.
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += xr[j];
    const float mu = sum / n;
    float var = 0;
#pragma omp simd reduction(+ : var)
    for (int64_t j = 0; j < n; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    const float rs = 1.0f / std::sqrt(var / n + eps);
    for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - mu) * rs * g[j] + bt[j];
    pm[r] = mu;
    ps[r] = rs;
  }
}

void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& dx, const Tensor& dgamma,
                         const Tensor& dbeta) {
  require_cpu({&dy, &x, &gamma, &mean, &rstd, &dx, &dgamma, &dbeta});
  const int64_t n = x.cols(), rows = x.rows();
  TD_CHECK(dy.shape() == x.shape() && dx.shape() == x.shape() && dgamma.numel() == n &&
               dbeta.numel() == n,
           "layer_norm_backward shapes");
  const float *pdy = dy.f32(), *px = x.f32(), *g = gamma.f32(), *pm = mean.f32(), *ps = rstd.f32();
  float* pdx = dx.f32();
  const int nt = parallel_worth_it(rows * n) ? omp_get_max_threads() : 1;
  // Per-thread partial sums for dgamma/dbeta, reduced at the end: no atomics, fixed order.
  float* partial = zeroed_scratch(static_cast<size_t>(nt) * 2 * n);
#pragma omp parallel num_threads(nt)
  {
    float* pg = partial + static_cast<size_t>(omp_get_thread_num()) * 2 * n;
    float* pb = pg + n;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = px + r * n;
      const float* dyr = pdy + r * n;
      float* dxr = pdx + r * n;
      const float mu = pm[r], rs = ps[r];
      float sum_dxhat = 0, sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
      for (int64_t j = 0; j < n; ++j) {
        const float xhat = (xr[j] - mu) * rs;
        const float dxhat = dyr[j] * g[j];
        pg[j] += dyr[j] * xhat;
        pb[j] += dyr[j];
        sum_dxhat += dxhat;
        sum_dxhat_xhat += dxhat * xhat;
      }
      const float a = sum_dxhat / n, b = sum_dxhat_xhat / n;
      for (int64_t j = 0; j < n; ++j) {
        const float xhat = (xr[j] - mu) * rs;
        dxr[j] = rs * (dyr[j] * g[j] - a - xhat * b);
      }
    }
  }
  float *dg = dgamma.f32(), *db = dbeta.f32();
  for (int t = 0; t < nt; ++t) {
    const float* pg = partial + static_cast<size_t>(t) * 2 * n;
    for (int64_t j = 0; j < n; ++j) {
      dg[j] += pg[j];
      db[j] += pg[n + j];
    }
  }
}

}  // namespace transduce::ops
