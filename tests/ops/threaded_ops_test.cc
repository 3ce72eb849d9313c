// Every op of ops/ops.h with a parallel branch, on that branch. The CPU kernels hand work of
// 32,768 elements (or multiply-adds) or more to an OpenMP team (parallel_worth_it in
// src/ops/cpu/check.h); the other op tests use a few thousand elements and the model tests
// d_model <= 32, so without this file the threaded code runs only in benchmarks. Each op runs at
// 1, 2 and 3 threads on sizes like a real model's that are not multiples of the thread count or
// of a vector width, against a naive double-precision reference written here; the runs at 2 and
// 3 threads must equal the run at 1 thread bit for bit where each output element is computed by
// one thread in an order that does not depend on the team (rows, columns or positions split
// between threads), and agree within the error bound where it does (per-thread partial sums,
// OpenMP reductions, BLAS).
//
// Tolerances are bounds on float32 round-off, not fitted numbers. One rounding errs by at most
// u = 2^-24 of its result; a sum of n terms in float32, however it is split into vector lanes,
// threads or partial sums, errs by at most gamma_n = n u / (1 - n u) times the sum of the terms'
// magnitudes (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 4.2), and each
// extra rounding in a term adds one to n. fast_exp adds its relative error 3e-7 (fast_exp.h,
// tests/ops/fast_exp_test.cc). Two runs each within B of the exact value are within 2B of each
// other: the bound between thread counts where the order of a sum depends on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "ops/cpu/check.h"
#include "ops/ops.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;
using transduce::testing::ThreadCountGuard;

constexpr double kU = 0x1p-24;  // float32 unit round-off
constexpr double kExp = 3e-7;   // fast_exp's relative error
constexpr int kThreadCounts[] = {1, 2, 3};
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double gamma_n(int64_t n) {
  return static_cast<double>(n) * kU / (1.0 - static_cast<double>(n) * kU);
}

size_t idx(int64_t i) {
  return static_cast<size_t>(i);
}

// The outputs of one run of an op, at each thread count in kThreadCounts.
using Runs = std::vector<std::vector<Tensor>>;

// Runs `op` (which makes fresh outputs and returns them) at 1, 2 and 3 threads, then restores the
// thread count.
template <typename Op>
Runs at_each_thread_count(Op&& op) {
  ThreadCountGuard restore;
  Runs runs;
  for (int threads : kThreadCounts) {
    EXPECT_EQ(set_threads(threads), threads);
    EXPECT_EQ(num_threads(), threads);
    runs.push_back(op());
  }
  return runs;
}

std::string threads_of(size_t run) {
  return "at " + std::to_string(kThreadCounts[run]) + " threads";
}

// The bounds below are first-order (they count roundings of at most u each); a relative 1e-6 more
// covers the terms in u^2 and beyond.
constexpr double kSecondOrder = 1 + 1e-6;

// |got[i] - want[i]| <= tol[i] for every i (NaN fails); reports the count and the first miss.
void expect_within(const std::string& what, const float* got, const std::vector<double>& want,
                   const std::vector<double>& tol) {
  int64_t bad = 0;
  std::ostringstream first;
  first << std::setprecision(9);
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::abs(double{got[i]} - want[i]) <= tol[i] * kSecondOrder) continue;
    if (bad++ == 0)
      first << ", the first at " << i << ": " << got[i] << " for " << want[i] << " +- " << tol[i];
  }
  EXPECT_EQ(bad, 0) << what << ": elements out of bounds of " << want.size() << first.str();
}

// Both runs are within tol of the exact value, so within 2 tol of each other.
void expect_agree(const std::string& what, const float* got, const float* one,
                  const std::vector<double>& tol) {
  int64_t bad = 0;
  std::ostringstream first;
  first << std::setprecision(9);
  for (size_t i = 0; i < tol.size(); ++i) {
    if (std::abs(double{got[i]} - double{one[i]}) <= 2 * tol[i] * kSecondOrder) continue;
    if (bad++ == 0) first << ", the first at " << i << ": " << got[i] << " vs " << one[i];
  }
  EXPECT_EQ(bad, 0) << what << ": elements farther than 2 bounds from 1 thread's" << first.str();
}

void expect_bitwise(const std::string& what, const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.numel(), want.numel()) << what;
  const size_t elem = dtype_size(got.dtype());
  const auto* a = static_cast<const unsigned char*>(got.raw());
  const auto* b = static_cast<const unsigned char*>(want.raw());
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (std::memcmp(a + idx(i) * elem, b + idx(i) * elem, elem) != 0) {
      if (first < 0) first = i;
      ++differ;
    }
  EXPECT_EQ(differ, 0) << what << ": elements that differ bit for bit, the first at " << first;
}

// Output `out` of every run within `tol` of `want`; the runs at 2 and 3 threads equal to the run
// at 1 thread bit for bit (`bitwise`), or else within twice the bound.
void check_runs(const Runs& runs, size_t out, const std::string& what,
                const std::vector<double>& want, const std::vector<double>& tol, bool bitwise) {
  for (size_t k = 0; k < runs.size(); ++k) {
    SCOPED_TRACE(threads_of(k));
    const Tensor& got = runs[k][out];
    ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
    expect_within(what, got.f32(), want, tol);
    if (k == 0) continue;
    if (bitwise)
      expect_bitwise(what + " against 1 thread's", got, runs[0][out]);
    else
      expect_agree(what, got.f32(), runs[0][out].f32(), tol);
  }
}

// I32 ids in [0, vocab): `frequent` of every 10 from the ten most frequent ids (as real text
// repeats a few tokens), the others anywhere; the first and last ids of the table are used.
Tensor random_ids(int64_t n, int64_t vocab, int frequent, SplitMix64& rng) {
  Tensor ids = Tensor::empty({n}, DType::I32);
  for (int64_t r = 0; r < n; ++r)
    ids.i32()[r] = static_cast<int32_t>(rng.randint(0, 9) < frequent ? rng.randint(0, 9)
                                                                     : rng.randint(0, vocab - 1));
  ids.i32()[0] = 0;
  ids.i32()[n - 1] = static_cast<int32_t>(vocab - 1);
  return ids;
}

// Pointwise ops are exact up to the roundings of their one formula: relu copies, add, scale
// (one rounding each) and axpy (two without a fused multiply-add).
TEST(ThreadedElementwise, ReluAddAxpyScale) {
  const int64_t rows = 301, cols = 517, n = rows * cols;  // 155,617 elements: odd, not 3k
  ASSERT_TRUE(ops::parallel_worth_it(n));
  SplitMix64 rng(101);
  Tensor x = random_tensor({rows, cols}, rng);
  for (int64_t i = 0; i < n; i += 97) x.f32()[i] = 0.0f;  // relu's boundary: no gradient at 0
  const Tensor b = random_tensor({rows, cols}, rng);
  const float alpha = -0.7f, beta = 0.3f;
  const std::vector<double> exact(idx(n), 0.0);
  std::vector<double> relu(idx(n)), drelu(idx(n)), sum(idx(n)), sum_tol(idx(n)), ax(idx(n)),
      ax_tol(idx(n)), scaled(idx(n)), scaled_tol(idx(n));
  for (int64_t i = 0; i < n; ++i) {
    const double xi = x.f32()[i], bi = b.f32()[i];
    relu[idx(i)] = xi > 0 ? xi : 0.0;
    drelu[idx(i)] = xi > 0 ? bi : 0.0;
    sum[idx(i)] = xi + bi;
    sum_tol[idx(i)] = kU * std::abs(sum[idx(i)]);
    ax[idx(i)] = xi + double{alpha} * bi;
    ax_tol[idx(i)] = 2 * kU * (std::abs(xi) + std::abs(double{alpha} * bi));
    scaled[idx(i)] = double{beta} * bi;
    scaled_tol[idx(i)] = kU * std::abs(scaled[idx(i)]);
  }
  const Runs runs = at_each_thread_count([&] {
    Tensor y = Tensor::empty(x.shape());
    ops::relu_forward(x, y);
    Tensor dx = b.clone();
    ops::relu_backward(y, dx, dx);  // dx aliasing dy
    Tensor s = Tensor::empty(x.shape());
    ops::add(x, b, s);
    Tensor a = x.clone();
    ops::axpy(alpha, b, a);
    Tensor c = b.clone();
    ops::scale(c, beta);
    return std::vector<Tensor>{y, dx, s, a, c};
  });
  check_runs(runs, 0, "relu_forward", relu, exact, true);
  check_runs(runs, 1, "relu_backward", drelu, exact, true);
  check_runs(runs, 2, "add", sum, sum_tol, true);
  check_runs(runs, 3, "axpy", ax, ax_tol, true);
  check_runs(runs, 4, "scale", scaled, scaled_tol, true);
}

TEST(ThreadedElementwise, DropoutForwardAndBackward) {
  const int64_t n = 301 * 517;
  ASSERT_TRUE(ops::parallel_worth_it(n));
  const float p = 0.1f;
  SplitMix64 rng(102);
  const Tensor x = random_tensor({n}, rng, 0.5f, 2.0f);  // never 0: a kept value is not 0
  const Tensor dy = random_tensor({n}, rng);
  const Runs runs = at_each_thread_count([&] {
    Tensor y = Tensor::empty({n}), mask = Tensor::empty({n}, DType::U8), dx = Tensor::empty({n});
    ops::dropout_forward(x, y, mask, p, 42, 3);
    ops::dropout_backward(dy, mask, p, dx);
    return std::vector<Tensor>{y, mask, dx};
  });
  for (size_t k = 0; k < runs.size(); ++k) {
    SCOPED_TRACE(threads_of(k));
    const uint8_t* mask = runs[k][1].u8();
    std::vector<double> y(idx(n)), y_tol(idx(n)), dx(idx(n)), dx_tol(idx(n));
    int64_t kept = 0, not_01 = 0;
    for (int64_t i = 0; i < n; ++i) {
      not_01 += mask[i] > 1;
      kept += mask[i] != 0;
      // x / (1 - p): the roundings of 1 - p, of its reciprocal and of the product.
      y[idx(i)] = mask[i] ? x.f32()[i] / (1.0 - p) : 0.0;
      y_tol[idx(i)] = 3 * kU * std::abs(y[idx(i)]);
      dx[idx(i)] = mask[i] ? dy.f32()[i] / (1.0 - p) : 0.0;
      dx_tol[idx(i)] = 3 * kU * std::abs(dx[idx(i)]);
    }
    EXPECT_EQ(not_01, 0);
    // Binomial(n, 0.9): a standard deviation of 0.00076 in the kept fraction.
    EXPECT_NEAR(static_cast<double>(kept) / n, 0.9, 0.005);
    expect_within("dropout_forward", runs[k][0].f32(), y, y_tol);
    expect_within("dropout_backward", runs[k][2].f32(), dx, dx_tol);
    if (k == 0) continue;
    // Each element's draw depends on (seed, stream, index) alone.
    for (size_t out = 0; out < 3; ++out)
      expect_bitwise("dropout output " + std::to_string(out), runs[k][out], runs[0][out]);
  }
}

// fill_rows splits rows; bias_grad sums rows into per-thread partial sums, then adds the partial
// sums: its result depends on the team.
TEST(ThreadedElementwise, FillRowsAndBiasGrad) {
  for (const auto& shape : {std::pair<int64_t, int64_t>{301, 512}, {257, 131}}) {
    const int64_t rows = shape.first, n = shape.second;
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(n));
    ASSERT_TRUE(ops::parallel_worth_it(rows * n));
    SplitMix64 rng(103);
    const Tensor dy = random_tensor({rows, n}, rng), bias = random_tensor({n}, rng);
    const Tensor db0 = random_tensor({n}, rng);
    std::vector<double> filled(idx(rows * n)), db(idx(n)), db_tol(idx(n));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) filled[idx(r * n + j)] = bias.f32()[j];
    for (int64_t j = 0; j < n; ++j) {
      double s = db0.f32()[j], magnitude = std::abs(db0.f32()[j]);
      for (int64_t r = 0; r < rows; ++r) {
        s += dy.f32()[r * n + j];
        magnitude += std::abs(dy.f32()[r * n + j]);
      }
      db[idx(j)] = s;
      // Along any path a term meets at most rows additions into a partial sum and 3 of partial
      // sums into dbias.
      db_tol[idx(j)] = gamma_n(rows + 3) * magnitude;
    }
    const Runs runs = at_each_thread_count([&] {
      Tensor x = dy.clone();
      ops::fill_rows(x, bias);
      Tensor g = db0.clone();
      ops::bias_grad(dy, g);
      return std::vector<Tensor>{x, g};
    });
    check_runs(runs, 0, "fill_rows", filled, std::vector<double>(filled.size(), 0.0), true);
    check_runs(runs, 1, "bias_grad", db, db_tol, false);
  }
}

// bias_grad through a ReLU (its output F32 or BF16) and writing the bf16 operand in the same pass:
// db within the sums' bound of the masked column sums, the operand bit for bit what relu_backward
// then to_bf16 give, at a feed-forward layer's width; some ReLU outputs are exactly zero or the
// least bf16 subnormal (above zero).
TEST(ThreadedElementwise, BiasGradThroughAReluIntoBf16) {
  const int64_t rows = 301, n = 2048;
  SplitMix64 rng(104);
  const Tensor dy = random_tensor({rows, n}, rng);
  Tensor relu32 = random_tensor({rows, n}, rng);
  ops::relu_forward(relu32, relu32);
  for (int64_t i = 0; i < rows * n; i += 97) relu32.f32()[i] = 0x1p-133f;  // bf16's 0x0001
  Tensor relu16 = Tensor::empty({rows, n}, DType::BF16);
  ops::to_bf16(relu32, relu16);
  const Tensor db0 = random_tensor({n}, rng);
  for (const Tensor* relu : {&relu32, &relu16}) {
    SCOPED_TRACE(relu == &relu32 ? "fp32 ReLU output" : "bf16 ReLU output");
    Tensor masked = Tensor::empty({rows, n});
    ops::relu_backward(*relu, dy, masked);
    Tensor want16 = Tensor::empty({rows, n}, DType::BF16);
    ops::to_bf16(masked, want16);
    std::vector<double> db(idx(n)), db_tol(idx(n));
    int64_t passed = 0;
    for (int64_t j = 0; j < n; ++j) {
      double s = db0.f32()[j], magnitude = std::abs(db0.f32()[j]);
      for (int64_t r = 0; r < rows; ++r) {
        const bool above = relu32.f32()[r * n + j] > 0.0f;
        s += above ? dy.f32()[r * n + j] : 0.0;
        magnitude += above ? std::abs(dy.f32()[r * n + j]) : 0.0;
        passed += above;
      }
      db[idx(j)] = s;
      db_tol[idx(j)] = gamma_n(rows + 3) * magnitude;
    }
    ASSERT_GT(passed, rows * n / 3);
    ASSERT_LT(passed, rows * n * 2 / 3);
    const Runs runs = at_each_thread_count([&] {
      Tensor g = db0.clone();
      Tensor dy16 = Tensor::empty({rows, n}, DType::BF16);
      ops::bias_grad(dy, g, dy16, *relu);
      return std::vector<Tensor>{g, dy16};
    });
    check_runs(runs, 0, "bias_grad through the ReLU", db, db_tol, false);
    for (size_t k = 0; k < runs.size(); ++k)
      expect_bitwise("the rounded gradient " + threads_of(k), runs[k][1], want16);
  }
}

// Forward: rows split between threads. Backward: dx rows split; dgamma and dbeta summed over rows
// in per-thread partial sums, so they depend on the team.
TEST(ThreadedLayerNorm, ForwardAndBackward) {
  for (const auto& shape : {std::pair<int64_t, int64_t>{301, 512}, {257, 131}}) {
    const int64_t rows = shape.first, n = shape.second;
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(n));
    ASSERT_TRUE(ops::parallel_worth_it(rows * n));
    SplitMix64 rng(104);
    const float eps = 1e-5f;
    const Tensor x = random_tensor({rows, n}, rng, -1.0f, 3.0f);
    const Tensor g = random_tensor({n}, rng, 0.5f, 1.5f), b = random_tensor({n}, rng);
    const Tensor dy = random_tensor({rows, n}, rng);
    const Tensor dg0 = random_tensor({n}, rng), db0 = random_tensor({n}, rng);
    const size_t all = idx(rows * n);
    std::vector<double> y(all), y_tol(all), mean(idx(rows)), mean_tol(idx(rows)), rstd(idx(rows)),
        rstd_tol(idx(rows));
    // The backward's inputs: the exact mean and rstd rounded to float (its own reference below
    // uses these very values).
    Tensor mean_in = Tensor::empty({rows}), rstd_in = Tensor::empty({rows});
    std::vector<double> dx(all), dx_tol(all), dg(idx(n)), dg_mag(idx(n)), db(idx(n)),
        db_mag(idx(n));
    for (int64_t j = 0; j < n; ++j) {
      dg[idx(j)] = dg0.f32()[j];
      dg_mag[idx(j)] = std::abs(dg0.f32()[j]);
      db[idx(j)] = db0.f32()[j];
      db_mag[idx(j)] = std::abs(db0.f32()[j]);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.f32() + r * n;
      const float* dyr = dy.f32() + r * n;
      double sum = 0, magnitude = 0, var = 0;
      for (int64_t j = 0; j < n; ++j) {
        sum += xr[j];
        magnitude += std::abs(xr[j]);
      }
      const double mu = sum / n;
      for (int64_t j = 0; j < n; ++j) var += (xr[j] - mu) * (xr[j] - mu);
      const double rs = 1.0 / std::sqrt(var / n + eps);
      // The mean: a sum of n terms, then a division. rstd: a sum of n squares of about 3
      // roundings each, halved by the square root, and a few operations (the mean's error enters
      // the variance only squared).
      const double mean_err = gamma_n(n) * magnitude / n + kU * std::abs(mu);
      const double rstd_rel = gamma_n(n + 8);
      mean[idx(r)] = mu;
      mean_tol[idx(r)] = mean_err;
      rstd[idx(r)] = rs;
      rstd_tol[idx(r)] = rstd_rel * rs;
      for (int64_t j = 0; j < n; ++j) {
        const double xhat = (xr[j] - mu) * rs;
        const size_t i = idx(r * n + j);
        y[i] = xhat * g.f32()[j] + b.f32()[j];
        // The mean's error scaled by rstd * gamma, rstd's relative error, and the four roundings
        // of (x - mean) * rstd * gamma + beta.
        y_tol[i] = rs * std::abs(g.f32()[j]) * mean_err +
                   std::abs(xhat * g.f32()[j]) * (rstd_rel + 4 * kU) + 2 * kU * std::abs(y[i]);
      }

      // Backward from the given float mean and rstd.
      mean_in.f32()[r] = static_cast<float>(mu);
      rstd_in.f32()[r] = static_cast<float>(rs);
      const double m = mean_in.f32()[r], s = rstd_in.f32()[r];
      double a = 0, bsum = 0, a_mag = 0, b_mag = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double xhat = (xr[j] - m) * s, dxhat = double{dyr[j]} * g.f32()[j];
        a += dxhat;
        a_mag += std::abs(dxhat);
        bsum += dxhat * xhat;
        b_mag += std::abs(dxhat * xhat);
        dg[idx(j)] += dyr[j] * xhat;
        dg_mag[idx(j)] += std::abs(dyr[j] * xhat);
        db[idx(j)] += dyr[j];
        db_mag[idx(j)] += std::abs(dyr[j]);
      }
      a /= n;
      bsum /= n;
      a_mag /= n;
      b_mag /= n;
      for (int64_t j = 0; j < n; ++j) {
        const double xhat = (xr[j] - m) * s, dxhat = double{dyr[j]} * g.f32()[j];
        const size_t i = idx(r * n + j);
        dx[i] = s * (dxhat - a - xhat * bsum);
        // mean(dxhat) and mean(dxhat * xhat) are sums of n terms of up to 4 roundings each;
        // then six roundings around them.
        dx_tol[i] = s * (gamma_n(n + 6) * (a_mag + std::abs(xhat) * b_mag) +
                         6 * kU * (std::abs(dxhat) + std::abs(a) + std::abs(xhat * bsum)));
      }
    }
    // dgamma's terms dy * xhat carry 3 roundings, dbeta's none; a term meets at most rows + 3
    // additions (into a partial sum, then the partial sums into the gradient).
    std::vector<double> dg_tol(idx(n)), db_tol(idx(n));
    for (int64_t j = 0; j < n; ++j) {
      dg_tol[idx(j)] = gamma_n(rows + 6) * dg_mag[idx(j)];
      db_tol[idx(j)] = gamma_n(rows + 3) * db_mag[idx(j)];
    }

    const Runs runs = at_each_thread_count([&] {
      Tensor out = Tensor::empty({rows, n}), mu = Tensor::empty({rows}), rs = Tensor::empty({rows});
      ops::layer_norm_forward(x, g, b, eps, out, mu, rs);
      Tensor grad_x = Tensor::empty({rows, n}), grad_g = dg0.clone(), grad_b = db0.clone();
      ops::layer_norm_backward(dy, x, g, mean_in, rstd_in, grad_x, grad_g, grad_b);
      // dx aliasing dy (as the model calls it) gives the same dx.
      Tensor inout = dy.clone(), grad_g2 = dg0.clone(), grad_b2 = db0.clone();
      ops::layer_norm_backward(inout, x, g, mean_in, rstd_in, inout, grad_g2, grad_b2);
      return std::vector<Tensor>{out, mu, rs, grad_x, grad_g, grad_b, inout};
    });
    check_runs(runs, 0, "layer_norm y", y, y_tol, true);
    check_runs(runs, 1, "layer_norm mean", mean, mean_tol, true);
    check_runs(runs, 2, "layer_norm rstd", rstd, rstd_tol, true);
    check_runs(runs, 3, "layer_norm dx", dx, dx_tol, true);
    check_runs(runs, 4, "layer_norm dgamma", dg, dg_tol, false);
    check_runs(runs, 5, "layer_norm dbeta", db, db_tol, false);
    for (size_t k = 0; k < runs.size(); ++k)
      expect_bitwise("dx aliasing dy " + threads_of(k), runs[k][6], runs[k][3]);
  }
}

// Rows (sentence, head, query) split between threads.
TEST(ThreadedSoftmax, MaskedSoftmax) {
  struct Case {
    int64_t batch, heads, lq, lk;
    bool causal;
    int64_t causal_offset;
  };
  // Padded sentences, one with every key hidden; then a decoder's self-attention over a cache
  // (query i sees keys j <= i + 30), where sentence 0's first 40 keys are padding, so its first
  // 10 queries see nothing.
  for (const Case& c : {Case{5, 4, 33, 61, false, 0}, Case{3, 7, 29, 59, true, 30}}) {
    SCOPED_TRACE(c.causal ? "causal" : "padding only");
    const int64_t rows = c.batch * c.heads * c.lq, lk = c.lk;
    ASSERT_TRUE(ops::parallel_worth_it(rows * lk));
    SplitMix64 rng(105);
    const Tensor scores = random_tensor({c.batch, c.heads, c.lq, lk}, rng, -4.0f, 4.0f);
    Tensor pad = Tensor::zeros({c.batch, lk}, DType::U8);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < lk; ++j) {
        const bool hidden =
            c.causal ? (b == 0 && j < 40) || (b == 2 && j >= lk - 5) : b == 2 || j >= lk - 4 * b;
        pad.u8()[b * lk + j] = hidden;
      }
    std::vector<double> want(idx(rows * lk), 0.0), tol(idx(rows * lk), 0.0);
    int64_t empty_rows = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = r / (c.heads * c.lq), q = r % c.lq;
      const float* s = scores.f32() + r * lk;
      auto shown = [&](int64_t j) {
        return !pad.u8()[b * lk + j] && (!c.causal || j <= q + c.causal_offset);
      };
      double mx = -INFINITY, mn = INFINITY;
      for (int64_t j = 0; j < lk; ++j)
        if (shown(j)) {
          mx = std::max(mx, double{s[j]});
          mn = std::min(mn, double{s[j]});
        }
      if (mx == -INFINITY) {  // every key hidden: zeros
        ++empty_rows;
        continue;
      }
      double z = 0;
      for (int64_t j = 0; j < lk; ++j)
        if (shown(j)) z += std::exp(s[j] - mx);
      // Each exponential: fast_exp's error and the rounding of s - max; then a sum of positive
      // terms, a reciprocal and a product; normalising doubles the exponentials' error.
      const double rel = 2 * (kExp + kU * (mx - mn)) + gamma_n(lk + 3);
      for (int64_t j = 0; j < lk; ++j)
        if (shown(j)) {
          want[idx(r * lk + j)] = std::exp(s[j] - mx) / z;
          tol[idx(r * lk + j)] = rel * want[idx(r * lk + j)];
        }
    }
    EXPECT_GT(empty_rows, 0);
    const Runs runs = at_each_thread_count([&] {
      Tensor p = scores.clone();
      ops::masked_softmax(p, c.batch, c.heads, pad, c.causal, c.causal_offset);
      return std::vector<Tensor>{p};
    });
    check_runs(runs, 0, "masked_softmax", want, tol, true);
  }
}

TEST(ThreadedSoftmax, Backward) {
  // Awkward sizes, then a [batch 5, heads 8, 29 queries, 31 keys] attention's.
  for (const auto& shape : {std::pair<int64_t, int64_t>{257, 131}, {5 * 8 * 29, 31}}) {
    const int64_t rows = shape.first, n = shape.second;
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(n));
    ASSERT_TRUE(ops::parallel_worth_it(rows * n));
    SplitMix64 rng(106);
    const float scale = 0.125f;
    const Tensor scores = random_tensor({rows, n}, rng, -3.0f, 3.0f);
    const Tensor upstream = random_tensor({rows, n}, rng);  // dL/dprobs
    Tensor probs = Tensor::empty({rows, n});
    for (int64_t r = 0; r < rows; ++r) {
      double z = 0;
      for (int64_t j = 0; j < n; ++j) z += std::exp(double{scores.f32()[r * n + j]});
      for (int64_t j = 0; j < n; ++j)
        probs.f32()[r * n + j] = static_cast<float>(std::exp(double{scores.f32()[r * n + j]}) / z);
    }
    std::vector<double> want(idx(rows * n)), tol(idx(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      const float* p = probs.f32() + r * n;
      const float* d = upstream.f32() + r * n;
      double dot = 0, magnitude = 0;
      for (int64_t j = 0; j < n; ++j) {
        dot += double{p[j]} * d[j];
        magnitude += std::abs(double{p[j]} * d[j]);
      }
      for (int64_t j = 0; j < n; ++j) {
        want[idx(r * n + j)] = scale * p[j] * (d[j] - dot);
        // The dot product's n products and sum, then four roundings.
        tol[idx(r * n + j)] =
            scale * p[j] * (gamma_n(n + 1) * magnitude + 4 * kU * std::abs(d[j] - dot));
      }
    }
    const Runs runs = at_each_thread_count([&] {
      Tensor ds = upstream.clone();
      ops::softmax_backward(probs, ds, scale);
      return std::vector<Tensor>{ds};
    });
    check_runs(runs, 0, "softmax_backward", want, tol, true);
  }
}

// (sentence, head) pairs split between threads; each computes all its queries.
TEST(ThreadedAttention, InferenceMatchesNaiveAttention) {
  struct Case {
    int64_t batch, heads, dk, dv, lq, capacity, lk;
    bool causal;
    int64_t causal_offset;
    bool pad, probs;
  };
  // A base model's cross-attention (8 heads of 64) over padded sources, one all padding, with the
  // weights written out; then a decoder step over a cache (3 new queries after 38 keys) with
  // awkward head sizes and no weights.
  for (const Case& c : {Case{5, 8, 64, 64, 23, 31, 29, false, 0, true, true},
                        Case{7, 5, 17, 19, 3, 44, 41, true, 38, false, false}}) {
    SCOPED_TRACE(c.causal ? "decoder step" : "cross-attention");
    const int64_t bh = c.batch * c.heads, lk = c.lk, wq = c.heads * c.dk, wv = c.heads * c.dv;
    ASSERT_TRUE(ops::parallel_worth_it(bh * c.lq * lk * (c.dk + c.dv)));
    SplitMix64 rng(107);
    const float scale = static_cast<float>(1.0 / std::sqrt(double(c.dk)));
    const Tensor q = random_tensor({c.batch, c.lq, wq}, rng);
    Tensor keys = random_tensor({c.batch, c.capacity, wq}, rng);
    Tensor values = random_tensor({c.batch, c.capacity, wv}, rng);
    // Cache positions past lk are not in use: NaN there would spread into any result that read
    // them.
    for (int64_t b = 0; b < c.batch; ++b) {
      std::fill(keys.f32() + (b * c.capacity + lk) * wq, keys.f32() + (b + 1) * c.capacity * wq,
                kNaN);
      std::fill(values.f32() + (b * c.capacity + lk) * wv, values.f32() + (b + 1) * c.capacity * wv,
                kNaN);
    }
    Tensor pad;
    if (c.pad) {
      pad = Tensor::zeros({c.batch, lk}, DType::U8);
      for (int64_t j = lk - 5; j < lk; ++j) pad.u8()[1 * lk + j] = 1;  // sentence 1: last 5
      for (int64_t j = 0; j < lk; ++j) pad.u8()[3 * lk + j] = 1;       // sentence 3: every key
    }
    std::vector<double> ctx(idx(c.batch * c.lq * wv), 0.0), ctx_tol(ctx.size(), 0.0);
    std::vector<double> w(idx(bh * c.lq * lk), 0.0), w_tol(w.size(), 0.0);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.lq; ++i) {
          const float* qi = q.f32() + (b * c.lq + i) * wq + h * c.dk;
          std::vector<double> s(idx(lk));
          std::vector<bool> shown(idx(lk));
          double mx = -INFINITY, mn = INFINITY, score_err = 0;
          for (int64_t j = 0; j < lk; ++j) {
            shown[idx(j)] =
                !(c.pad && pad.u8()[b * lk + j]) && (!c.causal || j <= i + c.causal_offset);
            if (!shown[idx(j)]) continue;
            const float* kj = keys.f32() + (b * c.capacity + j) * wq + h * c.dk;
            double dot = 0, magnitude = 0;
            for (int64_t d = 0; d < c.dk; ++d) {
              dot += double{qi[d]} * kj[d];
              magnitude += std::abs(double{qi[d]} * kj[d]);
            }
            s[idx(j)] = scale * dot;
            score_err = std::max(score_err, gamma_n(c.dk + 1) * scale * magnitude);
            mx = std::max(mx, s[idx(j)]);
            mn = std::min(mn, s[idx(j)]);
          }
          if (mx == -INFINITY) continue;  // every key hidden: zeros
          double z = 0;
          for (int64_t j = 0; j < lk; ++j)
            if (shown[idx(j)]) z += std::exp(s[idx(j)] - mx);
          // A weight's relative error: its score's and the largest other's (2x to first order,
          // 3x to be safe), the exponentials' as in masked_softmax, and the sum's.
          const double w_rel = 3 * score_err + 2 * (kExp + kU * (mx - mn)) + gamma_n(lk + 3);
          for (int64_t j = 0; j < lk; ++j) {
            if (!shown[idx(j)]) continue;
            const double wj = std::exp(s[idx(j)] - mx) / z;
            const size_t wi = idx(((b * c.heads + h) * c.lq + i) * lk + j);
            w[wi] = wj;
            w_tol[wi] = w_rel * wj;
            const float* vj = values.f32() + (b * c.capacity + j) * wv + h * c.dv;
            for (int64_t d = 0; d < c.dv; ++d) {
              const size_t ci = idx((b * c.lq + i) * wv + h * c.dv + d);
              ctx[ci] += wj * vj[d];
              // The weights' error, then a sum of lk products.
              ctx_tol[ci] += (w_rel + gamma_n(lk + 2)) * wj * std::abs(vj[d]);
            }
          }
        }
    const Runs runs = at_each_thread_count([&] {
      Tensor context = Tensor::empty({c.batch, c.lq, wv});
      std::fill(context.f32(), context.f32() + context.numel(), kNaN);  // every element written
      Tensor probs;
      if (c.probs) {
        probs = Tensor::empty({c.batch, c.heads, c.lq, lk});
        std::fill(probs.f32(), probs.f32() + probs.numel(), kNaN);
      }
      ops::attention_inference(q, keys, values, lk, c.heads, scale, pad, c.causal, c.causal_offset,
                               context, probs);
      return c.probs ? std::vector<Tensor>{context, probs} : std::vector<Tensor>{context};
    });
    check_runs(runs, 0, "attention context", ctx, ctx_tol, true);
    if (c.probs) check_runs(runs, 1, "attention weights", w, w_tol, true);
  }
}

// C = alpha op(A) op(B) + beta C for every matrix of a grid: products of k terms, the scaling by
// alpha and beta and the final addition.
struct GridRef {
  std::vector<double> want, tol;
};

GridRef naive_grid(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                   const ops::MatrixGrid& a, const ops::MatrixGrid& b, float beta,
                   const ops::MatrixGrid& c, int64_t outer, int64_t inner, const Tensor& c0) {
  GridRef ref{std::vector<double>(idx(c0.numel()), 0.0), std::vector<double>(idx(c0.numel()), 0.0)};
  for (int64_t i = 0; i < c0.numel(); ++i) ref.want[idx(i)] = c0.f32()[i];  // outside the grid
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const float* pa = a.t.f32() + a.offset + o * a.stride_outer + in * a.stride_inner;
      const float* pb = b.t.f32() + b.offset + o * b.stride_outer + in * b.stride_inner;
      const int64_t pc = c.offset + o * c.stride_outer + in * c.stride_inner;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          double s = 0, magnitude = 0;
          for (int64_t x = 0; x < k; ++x) {
            const double prod = double{ta ? pa[x * a.ld + r] : pa[r * a.ld + x]} *
                                (tb ? pb[col * b.ld + x] : pb[x * b.ld + col]);
            s += prod;
            magnitude += std::abs(prod);
          }
          const size_t e = idx(pc + r * c.ld + col);
          const double old = beta == 0.0f ? 0.0 : double{beta} * c0.f32()[e];
          ref.want[e] = alpha * s + old;
          ref.tol[e] = gamma_n(k + 3) * (std::abs(alpha) * magnitude + std::abs(old));
        }
    }
  return ref;
}

// Matrices of the grid split between threads, each one BLAS call that runs single-threaded
// whatever the team (OpenBLAS takes one thread inside a parallel region, and set_threads(1) gives
// it one outside), so bit for bit.
TEST(ThreadedGemm, GridOfPerHeadProducts) {
  SplitMix64 rng(108);
  {
    SCOPED_TRACE("scores Q K^T / sqrt(dk): 5 sentences, 8 heads of 64, 23 queries, 29 keys");
    const int64_t batch = 5, heads = 8, dk = 64, lq = 23, lk = 29;
    ASSERT_TRUE(ops::parallel_worth_it(batch * heads * lq * lk * dk));
    const Tensor q = random_tensor({batch, lq, heads * dk}, rng);
    const Tensor k = random_tensor({batch, lk, heads * dk}, rng);
    const ops::MatrixGrid a{q, 0, heads * dk, lq * heads * dk, dk};
    const ops::MatrixGrid b{k, 0, heads * dk, lk * heads * dk, dk};
    Tensor s0 = Tensor::empty({batch, heads, lq, lk});
    std::fill(s0.f32(), s0.f32() + s0.numel(), kNaN);  // beta 0: never read
    const ops::MatrixGrid c{s0, 0, lk, heads * lq * lk, lq * lk};
    const GridRef ref =
        naive_grid(false, true, lq, lk, dk, 0.125f, a, b, 0.0f, c, batch, heads, s0);
    const Runs runs = at_each_thread_count([&] {
      Tensor s = s0.clone();
      ops::gemm_grid(false, true, lq, lk, dk, 0.125f, a, b, 0.0f,
                     ops::MatrixGrid{s, 0, lk, heads * lq * lk, lq * lk}, batch, heads);
      return std::vector<Tensor>{s};
    });
    check_runs(runs, 0, "gemm_grid scores", ref.want, ref.tol, true);
  }
  {
    SCOPED_TRACE("context += P V: 7 sentences, 5 heads of 19, 13 queries, 37 keys");
    const int64_t batch = 7, heads = 5, dv = 19, lq = 13, lk = 37;
    ASSERT_TRUE(ops::parallel_worth_it(batch * heads * lq * dv * lk));
    const Tensor p = random_tensor({batch, heads, lq, lk}, rng, 0.0f, 0.1f);
    const Tensor v = random_tensor({batch, lk, heads * dv}, rng);
    const Tensor ctx0 = random_tensor({batch, lq, heads * dv}, rng);
    const ops::MatrixGrid a{p, 0, lk, heads * lq * lk, lq * lk};
    const ops::MatrixGrid b{v, 0, heads * dv, lk * heads * dv, dv};
    const ops::MatrixGrid c{ctx0, 0, heads * dv, lq * heads * dv, dv};
    const GridRef ref =
        naive_grid(false, false, lq, dv, lk, 1.0f, a, b, 1.0f, c, batch, heads, ctx0);
    const Runs runs = at_each_thread_count([&] {
      Tensor ctx = ctx0.clone();
      ops::gemm_grid(false, false, lq, dv, lk, 1.0f, a, b, 1.0f,
                     ops::MatrixGrid{ctx, 0, heads * dv, lq * heads * dv, dv}, batch, heads);
      return std::vector<Tensor>{ctx};
    });
    check_runs(runs, 0, "gemm_grid context", ref.want, ref.tol, true);
  }
}

// gemm has no OpenMP loop of its own: OpenBLAS splits the product between the threads that
// set_threads gives it, in an order of its choosing, so the runs agree within the bound only.
TEST(ThreadedGemm, LinearLayerProductsThreadedByBlas) {
  SplitMix64 rng(109);
  const int64_t tokens = 301, d_in = 512, d_out = 131;
  const Tensor x = random_tensor({tokens, d_in}, rng), w = random_tensor({d_out, d_in}, rng);
  const Tensor dy = random_tensor({tokens, d_out}, rng), dw0 = random_tensor({d_out, d_in}, rng);
  Tensor y0 = Tensor::empty({tokens, d_out});
  std::fill(y0.f32(), y0.f32() + y0.numel(), kNaN);  // beta 0: never read
  // y = x W^T and dW += dy^T x, as grids of one matrix.
  const GridRef fwd = naive_grid(false, true, tokens, d_out, d_in, 1.0f, {x, 0, d_in, 0, 0},
                                 {w, 0, d_in, 0, 0}, 0.0f, {y0, 0, d_out, 0, 0}, 1, 1, y0);
  const GridRef bwd = naive_grid(true, false, d_out, d_in, tokens, 1.0f, {dy, 0, d_out, 0, 0},
                                 {x, 0, d_in, 0, 0}, 1.0f, {dw0, 0, d_in, 0, 0}, 1, 1, dw0);
  const Runs runs = at_each_thread_count([&] {
    Tensor y = y0.clone(), dw = dw0.clone();
    ops::gemm(x, false, w, true, y);
    ops::gemm(dy, true, x, false, dw, 1.0f, 1.0f);
    return std::vector<Tensor>{y, dw};
  });
  check_runs(runs, 0, "gemm x W^T", fwd.want, fwd.tol, false);
  check_runs(runs, 1, "gemm dy^T x", bwd.want, bwd.tol, false);
}

// gather splits rows; scatter_add splits columns (ids repeat, so rows cannot be split), and every
// column is summed by one thread in row order: bit for bit at any thread count.
TEST(ThreadedEmbedding, GatherAndScatterAdd) {
  struct Case {
    int64_t vocab, tokens, d;
  };
  for (const Case& c : {Case{8000, 301, 512}, Case{4001, 257, 131}}) {
    SCOPED_TRACE("vocab " + std::to_string(c.vocab) + ", d " + std::to_string(c.d));
    ASSERT_TRUE(ops::parallel_worth_it(c.tokens * c.d));
    SplitMix64 rng(110);
    const float scale = static_cast<float>(std::sqrt(double(c.d)));
    const Tensor table = random_tensor({c.vocab, c.d}, rng);
    const Tensor ids = random_ids(c.tokens, c.vocab, 4, rng);
    const Tensor dout = random_tensor({c.tokens, c.d}, rng);
    // The gather is one product per element: double holds it exactly, so rounding it to float
    // gives the float product exactly.
    std::vector<double> gathered(idx(c.tokens * c.d));
    for (int64_t r = 0; r < c.tokens; ++r)
      for (int64_t j = 0; j < c.d; ++j)
        gathered[idx(r * c.d + j)] =
            static_cast<float>(double{table.f32()[ids.i32()[r] * c.d + j]} * scale);
    // The scatter adds each id's k rows' products into its row: k + 1 roundings a path. Rows no id
    // names must not change at all.
    std::vector<double> scattered(idx(c.vocab * c.d)), magnitude(scattered.size());
    std::vector<int64_t> count(idx(c.vocab), 0);
    for (int64_t i = 0; i < c.vocab * c.d; ++i) {
      scattered[idx(i)] = table.f32()[i];
      magnitude[idx(i)] = std::abs(table.f32()[i]);
    }
    for (int64_t r = 0; r < c.tokens; ++r) {
      const int64_t id = ids.i32()[r];
      ++count[idx(id)];
      for (int64_t j = 0; j < c.d; ++j) {
        const double term = double{dout.f32()[r * c.d + j]} * scale;
        scattered[idx(id * c.d + j)] += term;
        magnitude[idx(id * c.d + j)] += std::abs(term);
      }
    }
    EXPECT_GT(*std::max_element(count.begin(), count.end()), 10);  // ids repeat
    std::vector<double> scattered_tol(scattered.size(), 0.0);
    for (int64_t i = 0; i < c.vocab * c.d; ++i)
      if (count[idx(i / c.d)] > 0)
        scattered_tol[idx(i)] = gamma_n(count[idx(i / c.d)] + 2) * magnitude[idx(i)];
    const Runs runs = at_each_thread_count([&] {
      Tensor out = Tensor::empty({c.tokens, c.d});
      ops::embedding_gather(table, ids, scale, out);
      Tensor dtable = table.clone();
      ops::embedding_scatter_add(dout, ids, scale, dtable);
      return std::vector<Tensor>{out, dtable};
    });
    check_runs(runs, 0, "embedding_gather", gathered, std::vector<double>(gathered.size(), 0.0),
               true);
    check_runs(runs, 1, "embedding_scatter_add", scattered, scattered_tol, true);
  }
}

// add_positions splits the batch's rows; positions_grad splits positions, each summing its
// sentences in order: bit for bit at any thread count.
TEST(ThreadedEmbedding, PositionsAndTheirGradient) {
  struct Case {
    int64_t batch, len, d, table_rows, offset;
  };
  for (const Case& c : {Case{7, 43, 512, 64, 5}, Case{3, 89, 131, 100, 11}}) {
    SCOPED_TRACE(std::to_string(c.batch) + " x " + std::to_string(c.len) + " x " +
                 std::to_string(c.d));
    ASSERT_TRUE(ops::parallel_worth_it(c.batch * c.len * c.d));
    SplitMix64 rng(111);
    const Tensor x = random_tensor({c.batch, c.len, c.d}, rng);
    const Tensor table = random_tensor({c.table_rows, c.d}, rng);
    std::vector<double> added(idx(x.numel())), added_tol(added.size());
    for (int64_t r = 0; r < c.batch * c.len; ++r)
      for (int64_t j = 0; j < c.d; ++j) {
        const size_t i = idx(r * c.d + j);
        added[i] = double{x.f32()[i]} + table.f32()[(r % c.len + c.offset) * c.d + j];
        added_tol[i] = kU * std::abs(added[i]);  // one rounding
      }
    // Each position's row gets batch terms added in: batch roundings. Other rows do not change.
    std::vector<double> grad(idx(table.numel())), grad_tol(grad.size(), 0.0);
    for (int64_t t = 0; t < c.table_rows; ++t)
      for (int64_t j = 0; j < c.d; ++j) {
        const size_t i = idx(t * c.d + j);
        grad[i] = table.f32()[i];
        if (t < c.offset || t >= c.offset + c.len) continue;
        double magnitude = std::abs(grad[i]);
        for (int64_t b = 0; b < c.batch; ++b) {
          const float v = x.f32()[(b * c.len + t - c.offset) * c.d + j];
          grad[i] += v;
          magnitude += std::abs(v);
        }
        grad_tol[i] = gamma_n(c.batch) * magnitude;
      }
    const Runs runs = at_each_thread_count([&] {
      Tensor y = x.clone();
      ops::add_positions(y, table, c.offset);
      Tensor dtable = table.clone();
      ops::positions_grad(x, dtable, c.offset);
      return std::vector<Tensor>{y, dtable};
    });
    check_runs(runs, 0, "add_positions", added, added_tol, true);
    check_runs(runs, 1, "positions_grad", grad, grad_tol, true);
  }
}

// Rows split between threads.
TEST(ThreadedRows, LogSoftmax) {
  struct Case {
    int64_t rows, vocab;
    bool in_place;
  };
  // 37 hypotheses over an awkward vocabulary; 5 over 8000 in place (3 threads get 2, 2 and 1).
  for (const Case& c : {Case{37, 4001, false}, Case{5, 8000, true}}) {
    SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.vocab));
    const int64_t n = c.vocab;
    ASSERT_TRUE(ops::parallel_worth_it(c.rows * n));
    SplitMix64 rng(113);
    const Tensor x = random_tensor({c.rows, n}, rng, -8.0f, 8.0f);
    std::vector<double> want(idx(c.rows * n)), tol(want.size());
    for (int64_t r = 0; r < c.rows; ++r) {
      const float* row = x.f32() + r * n;
      double mx = -INFINITY, mn = INFINITY, z = 0;
      for (int64_t j = 0; j < n; ++j) {
        mx = std::max(mx, double{row[j]});
        mn = std::min(mn, double{row[j]});
      }
      for (int64_t j = 0; j < n; ++j) z += std::exp(row[j] - mx);
      const double lse = mx + std::log(z);
      // The sum of exponentials' relative error (fast_exp, the rounding of x - max, the sum) is
      // its logarithm's absolute error; then the rounding of log, of max + log and of x - lse.
      const double lse_err =
          kExp + kU * (mx - mn) + gamma_n(n + 1) + 2 * kU * std::log(z) + kU * std::abs(lse);
      for (int64_t j = 0; j < n; ++j) {
        want[idx(r * n + j)] = row[j] - lse;
        tol[idx(r * n + j)] = lse_err + kU * std::abs(row[j] - lse);
      }
    }
    const Runs runs = at_each_thread_count([&] {
      Tensor out = c.in_place ? x.clone() : Tensor::empty({c.rows, n});
      ops::log_softmax(c.in_place ? out : x, out);
      return std::vector<Tensor>{out};
    });
    check_runs(runs, 0, "log_softmax", want, tol, true);
  }
}

// An ensemble's log-probabilities combined element by element (blocks split between threads, so
// bit for bit at every thread count): three models over 101 hypotheses x 4001 tokens, some
// tokens banned (-inf) by one model and some by all. log_mean_exp: fast_exp's error and the
// rounding of each x - top (relative kU |x - top| on each term), the float sum of 3 terms, then
// the roundings of log, of top + log and of the - log 3. mean: a float sum of 3 terms and a
// multiplication.
TEST(ThreadedRows, EnsembleMeans) {
  const int64_t rows = 101, vocab = 4001, n = rows * vocab, m = 3;
  ASSERT_TRUE(ops::parallel_worth_it(n));
  SplitMix64 rng(115);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<Tensor> xs;
  for (int64_t k = 0; k < m; ++k) {
    Tensor x = random_tensor({rows, vocab}, rng, -30.0f, 0.0f);
    for (int64_t i = k; i < n; i += 97) x.f32()[i] = -inf;     // banned by this model
    for (int64_t i = 50; i < n; i += 1009) x.f32()[i] = -inf;  // banned by all
    xs.push_back(x);
  }
  std::vector<double> want_lme(idx(n)), tol_lme(idx(n)), want_mean(idx(n)), tol_mean(idx(n));
  for (int64_t i = 0; i < n; ++i) {
    double top = -INFINITY, sum = 0, logs = 0, magnitude = 0, spread = 0;
    for (const Tensor& x : xs) top = std::max(top, double{x.f32()[i]});
    for (const Tensor& x : xs) {
      const double v = x.f32()[i];
      sum += std::exp(v - top) / m;
      logs += v / m;
      magnitude += std::abs(v) / m;
      if (std::isfinite(v)) spread = std::max(spread, top - v);
    }
    want_lme[idx(i)] = std::isfinite(top) ? top + std::log(sum) : -INFINITY;
    want_mean[idx(i)] = logs;
    const double lse = std::log(sum * m);
    tol_lme[idx(i)] =
        kExp + kU * spread + gamma_n(m + 1) +
        kU * (std::abs(lse) + std::abs(top + lse) + std::log(3.0) + std::abs(want_lme[idx(i)]));
    tol_mean[idx(i)] = gamma_n(m + 1) * magnitude + kU * std::abs(logs);
  }
  // -inf where every model bans a token; a token banned by one model only keeps a finite score.
  EXPECT_TRUE(std::isinf(want_lme[50]) && std::isfinite(want_lme[97]));
  Runs runs = at_each_thread_count([&] {
    Tensor lme = Tensor::empty({rows, vocab}), mean = Tensor::empty({rows, vocab});
    ops::log_mean_exp(xs, lme);
    ops::mean(xs, mean);
    // In place into the first input, as the search does.
    std::vector<Tensor> copies;
    for (const Tensor& x : xs) copies.push_back(x.clone());
    ops::log_mean_exp(copies, copies[0]);
    return std::vector<Tensor>{lme, mean, copies[0]};
  });
  // expect_within fails on -inf against -inf (inf - inf is NaN): the infinities are compared
  // here, then set to 0 on both sides.
  for (size_t k = 0; k < runs.size(); ++k) {
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      wrong += (runs[k][0].f32()[i] == -inf) != std::isinf(want_lme[idx(i)]);
      wrong += (runs[k][1].f32()[i] == -inf) != std::isinf(want_mean[idx(i)]);
      wrong += (runs[k][2].f32()[i] == -inf) != std::isinf(want_lme[idx(i)]);
    }
    EXPECT_EQ(wrong, 0) << threads_of(k);
  }
  std::vector<double> finite_tol = tol_lme, finite_want = want_lme;
  std::vector<double> mean_want = want_mean, mean_tol = tol_mean;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isinf(finite_want[idx(i)])) {
      finite_want[idx(i)] = 0;  // checked above; made comparable here
      finite_tol[idx(i)] = INFINITY;
    }
    if (std::isinf(mean_want[idx(i)])) {
      mean_want[idx(i)] = 0;
      mean_tol[idx(i)] = INFINITY;
    }
  }
  for (auto& run : runs)
    for (Tensor& t : run)
      for (int64_t i = 0; i < n; ++i)
        if (std::isinf(t.f32()[i])) t.f32()[i] = 0;
  check_runs(runs, 0, "log_mean_exp", finite_want, finite_tol, true);
  check_runs(runs, 1, "mean", mean_want, mean_tol, true);
  check_runs(runs, 2, "log_mean_exp in place", finite_want, finite_tol, true);
}

// Rows split between threads. The forward's loss and nll are an OpenMP reduction whose order
// depends on the team; its per-row lse and the backward's gradients do not.
TEST(ThreadedCrossEntropy, ForwardAndBackward) {
  struct Case {
    int64_t rows, vocab;
  };
  for (const Case& c : {Case{301, 8000}, Case{257, 4001}}) {
    SCOPED_TRACE(std::to_string(c.rows) + " tokens, vocabulary " + std::to_string(c.vocab));
    const int64_t n = c.rows, v = c.vocab;
    ASSERT_TRUE(ops::parallel_worth_it(n * v));
    const int pad_id = 0;
    const float eps = 0.1f, grad_scale = 1.0f / 271;
    SplitMix64 rng(114);
    const Tensor logits = random_tensor({n, v}, rng, -6.0f, 6.0f);
    Tensor targets = random_ids(n, v, 2, rng);
    for (int64_t r = 0; r < n; r += 9) targets.i32()[r] = pad_id;  // padding
    targets.i32()[1] = static_cast<int32_t>(v - 1);

    const double e = eps;
    std::vector<double> lse(idx(n)), lse_tol(idx(n));
    double loss = 0, nll = 0, loss_tol = 0, nll_tol = 0;
    int64_t tokens = 0;
    Tensor lse_in = Tensor::empty({n});  // the backward's input: the exact lse rounded to float
    for (int64_t r = 0; r < n; ++r) {
      const float* row = logits.f32() + r * v;
      double mx = -INFINITY, mn = INFINITY, z = 0, sum = 0, magnitude = 0;
      for (int64_t j = 0; j < v; ++j) {
        mx = std::max(mx, double{row[j]});
        mn = std::min(mn, double{row[j]});
        sum += row[j];
        magnitude += std::abs(row[j]);
      }
      for (int64_t j = 0; j < v; ++j) z += std::exp(row[j] - mx);
      const double l = mx + std::log(z);
      // The float sum of exponentials' relative error, as in log_softmax; the log is in double.
      const double l_err = kExp + kU * (mx - mn) + gamma_n(v + 1);
      lse[idx(r)] = l;
      lse_tol[idx(r)] = l_err + kU * std::abs(l);
      lse_in.f32()[r] = static_cast<float>(l);
      if (targets.i32()[r] == pad_id) continue;
      const double nll_r = l - row[targets.i32()[r]];
      nll += nll_r;
      loss += (1 - e) * nll_r + e * (l - sum / v);
      nll_tol += l_err;
      // The smoothing term adds the float sum of the row's logits.
      loss_tol += l_err + e * gamma_n(v + 1) * magnitude / v;
      ++tokens;
    }

    std::vector<double> grad(idx(n * v), 0.0), grad_tol(grad.size(), 0.0);
    for (int64_t r = 0; r < n; ++r) {
      if (targets.i32()[r] == pad_id) continue;
      const float* row = logits.f32() + r * v;
      const double l = lse_in.f32()[r];
      for (int64_t j = 0; j < v; ++j) {
        const double p = std::exp(row[j] - l), label = j == targets.i32()[r] ? 1 - e : 0.0;
        const size_t i = idx(r * v + j);
        grad[i] = grad_scale * (p - e / v - label);
        // fast_exp's error and the rounding of its argument x - lse; then the roundings of
        // eps / V, of the difference and of the product (each at most u (p + eps / V)), and on
        // the label those of 1 - eps, of its product and of the subtraction.
        grad_tol[i] = grad_scale * (p * (kExp + kU * std::abs(row[j] - l)) + 3 * kU * (p + e / v) +
                                    (label > 0 ? 3 * kU * (label + p + e / v) : 0.0));
      }
    }

    std::vector<ops::CrossEntropySums> sums;
    const Runs runs = at_each_thread_count([&] {
      Tensor l = Tensor::empty({n});
      sums.push_back(ops::cross_entropy_forward(logits, targets, pad_id, eps, l));
      Tensor g = logits.clone();
      ops::cross_entropy_backward(g, targets, pad_id, eps, lse_in, grad_scale);
      return std::vector<Tensor>{l, g};
    });
    check_runs(runs, 0, "cross-entropy lse", lse, lse_tol, true);
    check_runs(runs, 1, "cross-entropy gradient", grad, grad_tol, true);
    // The reduction's double sums add a relative 1e-12 at most.
    loss_tol += 1e-12 * loss;
    nll_tol += 1e-12 * nll;
    for (size_t k = 0; k < sums.size(); ++k) {
      SCOPED_TRACE(threads_of(k));
      EXPECT_EQ(sums[k].tokens, tokens);
      EXPECT_NEAR(sums[k].loss, loss, loss_tol);
      EXPECT_NEAR(sums[k].nll, nll, nll_tol);
      EXPECT_NEAR(sums[k].loss, sums[0].loss, 2 * loss_tol);
      EXPECT_NEAR(sums[k].nll, sums[0].nll, 2 * nll_tol);
    }
  }
}

// Elements split between threads.
TEST(ThreadedAdam, UpdateMatchesDoubleAdam) {
  const int64_t n = 512 * 131 + 7;  // 67,079 parameters
  ASSERT_TRUE(ops::parallel_worth_it(n));
  SplitMix64 rng(115);
  const float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  const int64_t t = 7;
  const Tensor param = random_tensor({n}, rng), grad = random_tensor({n}, rng, -0.1f, 0.1f);
  const Tensor m0 = random_tensor({n}, rng, -0.05f, 0.05f);
  const Tensor v0 = random_tensor({n}, rng, 0.0f, 0.01f);
  const double b1 = beta1, b2 = beta2;
  const double c1 = 1 / (1 - std::pow(b1, double(t))), c2 = 1 / (1 - std::pow(b2, double(t)));
  // The kernel's float bias corrections: beta^t rounded to float, whose error 1 - beta^t
  // magnifies by beta^t / (1 - beta^t), then the subtraction and the reciprocal.
  const double c1_rel = kU * (std::pow(b1, double(t)) * c1 + 2);
  const double c2_rel = kU * (std::pow(b2, double(t)) * c2 + 2);
  std::vector<double> p(idx(n)), p_tol(idx(n)), m(idx(n)), m_tol(idx(n)), v(idx(n)), v_tol(idx(n));
  for (int64_t i = 0; i < n; ++i) {
    const double g = grad.f32()[i], mo = m0.f32()[i], vo = v0.f32()[i];
    const size_t e = idx(i);
    m[e] = b1 * mo + (1 - b1) * g;
    m_tol[e] = 2 * kU * (std::abs(b1 * mo) + std::abs((1 - b1) * g));  // two products, a sum
    v[e] = b2 * vo + (1 - b2) * g * g;
    v_tol[e] = 5 * kU * v[e];  // positive terms of up to 3 roundings, and a sum
    const double den = std::sqrt(v[e] * c2) + eps;
    const double step = lr * m[e] * c1 / den;
    p[e] = param.f32()[i] - step;
    // m's error through the step; c1's relative error, and half of c2's, v's and that of the
    // rounding of v * c2 (the square root); the roundings of m * c1, lr * (m * c1), the square
    // root, + eps and the division (5, counted as 8); then the subtraction.
    const double step_rel = c1_rel + (c2_rel + 5 * kU + kU) / 2 + 8 * kU;
    p_tol[e] = lr * c1 * m_tol[e] / den + step_rel * std::abs(step) + kU * std::abs(p[e]);
  }
  const Runs runs = at_each_thread_count([&] {
    Tensor pp = param.clone(), mm = m0.clone(), vv = v0.clone();
    ops::adam_update(pp, grad, mm, vv, lr, beta1, beta2, eps, t);
    return std::vector<Tensor>{pp, mm, vv};
  });
  check_runs(runs, 0, "adam param", p, p_tol, true);
  check_runs(runs, 1, "adam m", m, m_tol, true);
  check_runs(runs, 2, "adam v", v, v_tol, true);
}

}  // namespace
}  // namespace transduce
