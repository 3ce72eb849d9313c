#include "support/gradcheck.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace transduce::testing {

void fill_uniform(const Tensor& t, SplitMix64& rng, float lo, float hi) {
  float* p = t.f32();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = rng.uniform(lo, hi);
}

Tensor random_tensor(const Shape& shape, SplitMix64& rng, float lo, float hi) {
  Tensor t = Tensor::empty(shape);
  fill_uniform(t, rng, lo, hi);
  return t;
}

Tensor from(const Shape& shape, const std::vector<float>& values) {
  Tensor t = Tensor::empty(shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << "values for " << shape.str();
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.f32()[i] = values[static_cast<size_t>(i)];
  return t;
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += double{a.f32()[i]} * b.f32()[i];
  return s;
}

void expect_gradients_match(const std::function<double()>& loss,
                            const std::vector<GradTarget>& targets, const GradCheckOptions& o) {
  SplitMix64 rng(o.seed);
  for (const GradTarget& t : targets) {
    float* v = t.value.f32();
    const float* g = t.grad.f32();
    const int64_t n = t.value.numel();
    ASSERT_EQ(n, t.grad.numel()) << t.name;
    double scale = 0;
    for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(double{g[i]}));

    std::vector<int64_t> coords;
    if (n <= o.samples) {
      for (int64_t i = 0; i < n; ++i) coords.push_back(i);
    } else {
      for (int s = 0; s < o.samples; ++s) coords.push_back(rng.randint(0, n - 1));
    }
    const double center = coords.empty() ? 0.0 : loss();
    for (int64_t i : coords) {
      const float saved = v[i];
      v[i] = saved + o.eps;
      const double up = loss();
      v[i] = saved - o.eps;
      const double down = loss();
      v[i] = saved;
      const double analytic = g[i];
      const double tol = o.rtol * std::abs(analytic) + o.atol * scale + o.floor;
      // A ReLU kink inside the step spoils the central difference; the analytic gradient is
      // then still the one-sided derivative on the kink-free side.
      const double numeric = (up - down) / (2.0 * o.eps);
      const double right = (up - center) / o.eps, left = (center - down) / o.eps;
      const bool ok = std::abs(numeric - analytic) <= tol ||
                      std::abs(right - analytic) <= 2 * tol || std::abs(left - analytic) <= 2 * tol;
      EXPECT_TRUE(ok) << t.name << "[" << i << "]: numeric " << numeric << " (left " << left
                      << ", right " << right << ") analytic " << analytic << " tolerance " << tol;
    }

    // A random direction through every coordinate at once.
    std::vector<float> dir(n), saved(v, v + n);
    double along = 0, norm = 0;
    for (int64_t i = 0; i < n; ++i) {
      dir[i] = rng.uniform(-1.0f, 1.0f);
      along += double{dir[i]} * g[i];
      norm += double{dir[i]} * dir[i];
    }
    const float step = o.eps / static_cast<float>(std::sqrt(norm / std::max<int64_t>(n, 1)));
    for (int64_t i = 0; i < n; ++i) v[i] = saved[i] + step * dir[i];
    const double up = loss();
    for (int64_t i = 0; i < n; ++i) v[i] = saved[i] - step * dir[i];
    const double down = loss();
    std::copy(saved.begin(), saved.end(), v);
    const double mid = loss();
    const double numeric = (up - down) / (2.0 * step);
    const double right = (up - mid) / step, left = (mid - down) / step;
    double abs_sum = 0;
    for (int64_t i = 0; i < n; ++i) abs_sum += std::abs(double{dir[i]} * g[i]);
    const double tol = o.rtol * std::abs(along) + o.atol * abs_sum + o.floor;
    const bool ok = std::abs(numeric - along) <= tol || std::abs(right - along) <= 2 * tol ||
                    std::abs(left - along) <= 2 * tol;
    EXPECT_TRUE(ok) << t.name << " along a random direction: numeric " << numeric << " (left "
                    << left << ", right " << right << ") analytic " << along << " tolerance "
                    << tol;
  }
}

}  // namespace transduce::testing
