// layer_norm_forward/backward against hand-computed values and a naive double implementation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

Tensor filled(const Shape& shape, float v) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = v;
  return t;
}

// sum_{r,j} w[r,j] * LN(x)[r,j] in double.
double naive_weighted_ln(const std::vector<double>& x, const std::vector<double>& g,
                         const std::vector<double>& b, const std::vector<double>& w, int64_t n,
                         double eps) {
  const int64_t rows = static_cast<int64_t>(x.size()) / n;
  double out = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += x[size_t(r * n + j)];
    mu /= n;
    for (int64_t j = 0; j < n; ++j)
      var += (x[size_t(r * n + j)] - mu) * (x[size_t(r * n + j)] - mu);
    var /= n;
    const double rs = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j)
      out +=
          w[size_t(r * n + j)] * ((x[size_t(r * n + j)] - mu) * rs * g[size_t(j)] + b[size_t(j)]);
  }
  return out;
}

std::vector<double> as_double(const Tensor& t) {
  return std::vector<double>(t.f32(), t.f32() + t.numel());
}

TEST(OpsLayerNorm, UnitGammaZeroBetaGivesZeroMeanUnitVariance) {
  SplitMix64 rng(41);
  const int64_t rows = 7, n = 33;
  Tensor x = random_tensor({rows, n}, rng, -3.0f, 5.0f);
  Tensor y = Tensor::empty({rows, n}), mean = Tensor::empty({rows}), rstd = Tensor::empty({rows});
  ops::layer_norm_forward(x, filled({n}, 1.0f), filled({n}, 0.0f), 1e-5f, y, mean, rstd);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += y.f32()[r * n + j];
    mu /= n;
    for (int64_t j = 0; j < n; ++j) var += (y.f32()[r * n + j] - mu) * (y.f32()[r * n + j] - mu);
    var /= n;
    EXPECT_NEAR(mu, 0.0, 1e-5) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-4) << "row " << r;  // var / (var + eps), var ~ 5
  }
}

TEST(OpsLayerNorm, HandComputedOneByFour) {
  // x = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  Tensor x = Tensor::empty({1, 4}), g = Tensor::empty({4}), b = Tensor::empty({4});
  const float xs[4] = {1, 2, 3, 4}, gs[4] = {1, 2, 0.5f, -1}, bs[4] = {0, 1, -1, 0.5f};
  for (int j = 0; j < 4; ++j) {
    x.f32()[j] = xs[j];
    g.f32()[j] = gs[j];
    b.f32()[j] = bs[j];
  }
  Tensor y = Tensor::empty({1, 4}), mean = Tensor::empty({1}), rstd = Tensor::empty({1});
  ops::layer_norm_forward(x, g, b, 0.0f, y, mean, rstd);
  const double rs = 1.0 / std::sqrt(1.25);  // 0.894427191
  EXPECT_FLOAT_EQ(mean.f32()[0], 2.5f);
  EXPECT_NEAR(rstd.f32()[0], rs, 1e-6);
  EXPECT_NEAR(y.f32()[0], -1.5 * rs, 1e-6);            // -1.3416408
  EXPECT_NEAR(y.f32()[1], -0.5 * rs * 2 + 1, 1e-6);    //  0.1055728
  EXPECT_NEAR(y.f32()[2], 0.5 * rs * 0.5 - 1, 1e-6);   // -0.7763932
  EXPECT_NEAR(y.f32()[3], 1.5 * rs * -1 + 0.5, 1e-6);  // -0.8416408
  EXPECT_NEAR(y.f32()[0], -1.3416408, 1e-6);

  // With eps = 0.75 the variance term becomes 2: rstd = 1/sqrt(2).
  ops::layer_norm_forward(x, g, b, 0.75f, y, mean, rstd);
  EXPECT_NEAR(rstd.f32()[0], 1.0 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(y.f32()[3], -1.5 / std::sqrt(2.0) + 0.5, 1e-6);
}

TEST(OpsLayerNorm, SavesMeanAndRstdOfEveryRow) {
  SplitMix64 rng(42);
  const int64_t rows = 5, n = 12;
  const float eps = 1e-3f;
  Tensor x = random_tensor({rows, n}, rng, -2.0f, 4.0f);
  Tensor g = random_tensor({n}, rng), b = random_tensor({n}, rng);
  Tensor y = Tensor::empty({rows, n}), mean = Tensor::empty({rows}), rstd = Tensor::empty({rows});
  ops::layer_norm_forward(x, g, b, eps, y, mean, rstd);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += x.f32()[r * n + j];
    mu /= n;
    for (int64_t j = 0; j < n; ++j) var += (x.f32()[r * n + j] - mu) * (x.f32()[r * n + j] - mu);
    var /= n;
    const double rs = 1.0 / std::sqrt(var + double{eps});
    EXPECT_NEAR(mean.f32()[r], mu, 1e-6) << "row " << r;
    EXPECT_NEAR(rstd.f32()[r], rs, 1e-5 * rs) << "row " << r;
    for (int64_t j = 0; j < n; ++j)
      EXPECT_NEAR(y.f32()[r * n + j], (x.f32()[r * n + j] - mu) * rs * g.f32()[j] + b.f32()[j],
                  1e-5)
          << "row " << r << " col " << j;
  }
}

struct LnCase {
  int64_t rows = 6, n = 10;
  float eps = 1e-5f;
  Tensor x, g, b, dy, y, mean, rstd;
  explicit LnCase(uint64_t seed) {
    SplitMix64 rng(seed);
    x = random_tensor({rows, n}, rng, -2.0f, 2.0f);
    g = random_tensor({n}, rng, 0.5f, 1.5f);
    b = random_tensor({n}, rng);
    dy = random_tensor({rows, n}, rng);
    y = Tensor::empty({rows, n});
    mean = Tensor::empty({rows});
    rstd = Tensor::empty({rows});
    ops::layer_norm_forward(x, g, b, eps, y, mean, rstd);
  }
};

TEST(OpsLayerNorm, BackwardMatchesFiniteDifferencesOfNaiveLayerNorm) {
  LnCase c(43);
  Tensor dx = Tensor::empty({c.rows, c.n});
  Tensor dg = Tensor::zeros({c.n}), db = Tensor::zeros({c.n});
  ops::layer_norm_backward(c.dy, c.x, c.g, c.mean, c.rstd, dx, dg, db);

  std::vector<double> x = as_double(c.x), g = as_double(c.g), b = as_double(c.b);
  const std::vector<double> w = as_double(c.dy);
  const double h = 1e-5;
  auto loss = [&] { return naive_weighted_ln(x, g, b, w, c.n, c.eps); };
  auto central = [&](std::vector<double>& v, size_t i) {
    const double saved = v[i];
    v[i] = saved + h;
    const double up = loss();
    v[i] = saved - h;
    const double down = loss();
    v[i] = saved;
    return (up - down) / (2 * h);
  };
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(dx.f32()[i], central(x, i), 1e-4) << "dx " << i;
  for (size_t j = 0; j < g.size(); ++j) {
    EXPECT_NEAR(dg.f32()[j], central(g, j), 1e-4) << "dgamma " << j;
    EXPECT_NEAR(db.f32()[j], central(b, j), 1e-4) << "dbeta " << j;
  }
}

TEST(OpsLayerNorm, BackwardAccumulatesIntoDgammaAndDbeta) {
  LnCase c(44);
  Tensor dx = Tensor::empty({c.rows, c.n});
  Tensor dg = Tensor::zeros({c.n}), db = Tensor::zeros({c.n});
  ops::layer_norm_backward(c.dy, c.x, c.g, c.mean, c.rstd, dx, dg, db);
  const Tensor dg1 = dg.clone(), db1 = db.clone(), dx1 = dx.clone();
  ops::layer_norm_backward(c.dy, c.x, c.g, c.mean, c.rstd, dx, dg, db);
  for (int64_t j = 0; j < c.n; ++j) {
    EXPECT_NEAR(dg.f32()[j], 2 * dg1.f32()[j], 1e-6) << "dgamma " << j;
    EXPECT_NEAR(db.f32()[j], 2 * db1.f32()[j], 1e-6) << "dbeta " << j;
    // dbeta is the column sum of dy.
    double col = 0;
    for (int64_t r = 0; r < c.rows; ++r) col += c.dy.f32()[r * c.n + j];
    EXPECT_NEAR(db1.f32()[j], col, 1e-5) << "dbeta " << j;
  }
  // dx is overwritten, not accumulated.
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_EQ(dx.f32()[i], dx1.f32()[i]) << "dx " << i;

  // Starting from non-zero values adds to them.
  Tensor dg3 = Tensor::empty({c.n}), db3 = Tensor::empty({c.n});
  for (int64_t j = 0; j < c.n; ++j) dg3.f32()[j] = db3.f32()[j] = 10.0f;
  ops::layer_norm_backward(c.dy, c.x, c.g, c.mean, c.rstd, dx, dg3, db3);
  for (int64_t j = 0; j < c.n; ++j) {
    EXPECT_NEAR(dg3.f32()[j], 10.0f + dg1.f32()[j], 1e-5) << "dgamma " << j;
    EXPECT_NEAR(db3.f32()[j], 10.0f + db1.f32()[j], 1e-5) << "dbeta " << j;
  }
}

TEST(OpsLayerNorm, BackwardWithDxAliasingDyEqualsTheSeparateResult) {
  LnCase c(45);
  Tensor dx = Tensor::empty({c.rows, c.n});
  Tensor dg = Tensor::zeros({c.n}), db = Tensor::zeros({c.n});
  ops::layer_norm_backward(c.dy, c.x, c.g, c.mean, c.rstd, dx, dg, db);
  Tensor inout = c.dy.clone();
  Tensor dg2 = Tensor::zeros({c.n}), db2 = Tensor::zeros({c.n});
  ops::layer_norm_backward(inout, c.x, c.g, c.mean, c.rstd, inout, dg2, db2);
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_EQ(inout.f32()[i], dx.f32()[i]) << "dx " << i;
  for (int64_t j = 0; j < c.n; ++j) {
    EXPECT_EQ(dg2.f32()[j], dg.f32()[j]) << "dgamma " << j;
    EXPECT_EQ(db2.f32()[j], db.f32()[j]) << "dbeta " << j;
  }
}

TEST(OpsLayerNorm, ManyRowsBackwardMatchesNaiveFormulas) {
  // dgamma = sum_r dy * xhat, dbeta = sum_r dy. 257 x 16 is below parallel_worth_it, so this is
  // the serial path; threaded_ops_test.cc runs the per-thread partial sums.
  SplitMix64 rng(46);
  const int64_t rows = 257, n = 16;
  Tensor x = random_tensor({rows, n}, rng), g = random_tensor({n}, rng),
         b = random_tensor({n}, rng), dy = random_tensor({rows, n}, rng);
  Tensor y = Tensor::empty({rows, n}), mean = Tensor::empty({rows}), rstd = Tensor::empty({rows});
  ops::layer_norm_forward(x, g, b, 1e-5f, y, mean, rstd);
  Tensor dx = Tensor::empty({rows, n}), dg = Tensor::zeros({n}), db = Tensor::zeros({n});
  ops::layer_norm_backward(dy, x, g, mean, rstd, dx, dg, db);
  std::vector<double> want_g(size_t(n), 0.0), want_b(size_t(n), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += x.f32()[r * n + j];
    mu /= n;
    for (int64_t j = 0; j < n; ++j) var += (x.f32()[r * n + j] - mu) * (x.f32()[r * n + j] - mu);
    const double rs = 1.0 / std::sqrt(var / n + 1e-5);
    for (int64_t j = 0; j < n; ++j) {
      want_g[size_t(j)] += dy.f32()[r * n + j] * (x.f32()[r * n + j] - mu) * rs;
      want_b[size_t(j)] += dy.f32()[r * n + j];
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    EXPECT_NEAR(dg.f32()[j], want_g[size_t(j)], 1e-3) << "dgamma " << j;
    EXPECT_NEAR(db.f32()[j], want_b[size_t(j)], 1e-3) << "dbeta " << j;
  }
}

}  // namespace
}  // namespace transduce
