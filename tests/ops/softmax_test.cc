// masked_softmax and softmax_backward against hand-computed values and naive double loops.
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

// Softmax in double over the keys j < visible with hidden[j] == 0; the others get 0.
std::vector<double> naive_softmax(const float* row, int64_t lk, const uint8_t* hidden,
                                  int64_t visible) {
  std::vector<double> out(static_cast<size_t>(lk), 0.0);
  double mx = -INFINITY;
  for (int64_t j = 0; j < visible; ++j)
    if (!hidden || !hidden[j]) mx = std::max(mx, double{row[j]});
  if (mx == -INFINITY) return out;
  double sum = 0;
  for (int64_t j = 0; j < visible; ++j)
    if (!hidden || !hidden[j]) sum += std::exp(row[j] - mx);
  for (int64_t j = 0; j < visible; ++j)
    if (!hidden || !hidden[j]) out[static_cast<size_t>(j)] = std::exp(row[j] - mx) / sum;
  return out;
}

Tensor u8_tensor(const Shape& shape, const std::vector<uint8_t>& values) {
  Tensor t = Tensor::empty(shape, DType::U8);
  for (int64_t i = 0; i < t.numel(); ++i) t.u8()[i] = values[static_cast<size_t>(i)];
  return t;
}

TEST(OpsSoftmax, HandComputedOneByThree) {
  Tensor s = Tensor::empty({1, 1, 1, 3});
  s.f32()[0] = 1.0f;
  s.f32()[1] = 2.0f;
  s.f32()[2] = 3.0f;
  ops::masked_softmax(s, 1, 1, Tensor(), false, 0);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(s.f32()[0], std::exp(1.0) / z, 1e-6);  // 0.0900306
  EXPECT_NEAR(s.f32()[1], std::exp(2.0) / z, 1e-6);  // 0.2447285
  EXPECT_NEAR(s.f32()[2], std::exp(3.0) / z, 1e-6);  // 0.6652410
  EXPECT_NEAR(s.f32()[2], 0.6652410, 1e-6);
}

TEST(OpsSoftmax, PaddedKeysGetExactlyZeroAndTheRestSumToOne) {
  SplitMix64 rng(31);
  const int64_t lq = 3, lk = 5;
  Tensor s = random_tensor({1, 1, lq, lk}, rng, -2.0f, 2.0f);
  const Tensor s0 = s.clone();
  const std::vector<uint8_t> pad = {0, 1, 0, 0, 1};
  ops::masked_softmax(s, 1, 1, u8_tensor({1, lk}, pad), false, 0);
  for (int64_t i = 0; i < lq; ++i) {
    const auto want = naive_softmax(s0.f32() + i * lk, lk, pad.data(), lk);
    double sum = 0;
    for (int64_t j = 0; j < lk; ++j) {
      const float got = s.f32()[i * lk + j];
      if (pad[static_cast<size_t>(j)]) {
        EXPECT_EQ(got, 0.0f) << "query " << i << " key " << j;
      }
      EXPECT_NEAR(got, want[static_cast<size_t>(j)], 1e-6) << "query " << i << " key " << j;
      sum += got;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << "query " << i;
  }
}

TEST(OpsSoftmax, CausalMaskHidesLaterKeys) {
  SplitMix64 rng(32);
  const int64_t l = 4;
  Tensor s = random_tensor({1, 1, l, l}, rng, -2.0f, 2.0f);
  const Tensor s0 = s.clone();
  ops::masked_softmax(s, 1, 1, Tensor(), true, 0);
  for (int64_t i = 0; i < l; ++i) {
    const auto want = naive_softmax(s0.f32() + i * l, l, nullptr, i + 1);
    for (int64_t j = 0; j < l; ++j) {
      const float got = s.f32()[i * l + j];
      if (j > i) {
        EXPECT_EQ(got, 0.0f) << "query " << i << " saw key " << j;
      }
      EXPECT_NEAR(got, want[static_cast<size_t>(j)], 1e-6) << "query " << i << " key " << j;
    }
  }
  EXPECT_EQ(s.f32()[0], 1.0f);  // the first query sees only itself
}

// Restricted self-attention: query i (at position i + offset) sees keys j with |j - (i + offset)|
// <= window, and only those before it when causal; padding hides keys inside the window too.
TEST(OpsSoftmax, AWindowHidesKeysFartherThanIt) {
  SplitMix64 rng(35);
  const int64_t lq = 9, lk = 9, window = 2;
  std::vector<uint8_t> pad(lk, 0);
  pad[4] = 1;
  for (bool causal : {false, true})
    for (int64_t offset : {int64_t{0}, int64_t{-3}}) {
      Tensor s = random_tensor({1, 1, lq, lk}, rng, -2.0f, 2.0f);
      const Tensor s0 = s.clone();
      ops::masked_softmax(s, 1, 1, u8_tensor({1, lk}, pad), causal, offset, window);
      for (int64_t i = 0; i < lq; ++i) {
        const int64_t at = i + offset;
        std::vector<uint8_t> hidden(lk);
        for (int64_t j = 0; j < lk; ++j)
          hidden[j] = pad[j] || std::abs(j - at) > window || (causal && j > at);
        const auto want = naive_softmax(s0.f32() + i * lk, lk, hidden.data(), lk);
        for (int64_t j = 0; j < lk; ++j)
          EXPECT_NEAR(s.f32()[i * lk + j], want[static_cast<size_t>(j)], 1e-6)
              << "causal " << causal << " offset " << offset << " query " << i << " key " << j;
      }
    }
}

TEST(OpsSoftmax, CausalOffsetShiftsTheVisibleKeys) {
  // Incremental decoding: 2 new queries after 3 cached keys, 5 keys in all; query i sees j <= i+3.
  SplitMix64 rng(33);
  const int64_t lq = 2, lk = 5, offset = 3;
  Tensor s = random_tensor({1, 1, lq, lk}, rng, -2.0f, 2.0f);
  const Tensor s0 = s.clone();
  ops::masked_softmax(s, 1, 1, Tensor(), true, offset);
  for (int64_t i = 0; i < lq; ++i) {
    const auto want = naive_softmax(s0.f32() + i * lk, lk, nullptr, i + offset + 1);
    double sum = 0;
    for (int64_t j = 0; j < lk; ++j) {
      const float got = s.f32()[i * lk + j];
      if (j > i + offset) {
        EXPECT_EQ(got, 0.0f) << "query " << i << " saw key " << j;
      }
      if (j <= i + offset) {
        EXPECT_GT(got, 0.0f) << "query " << i << " lost key " << j;
      }
      EXPECT_NEAR(got, want[static_cast<size_t>(j)], 1e-6) << "query " << i << " key " << j;
      sum += got;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(OpsSoftmax, RowWithEveryKeyHiddenBecomesZerosNotNaN) {
  const int64_t lq = 2, lk = 3;
  Tensor s = Tensor::empty({2, 1, lq, lk});
  for (int64_t i = 0; i < s.numel(); ++i) s.f32()[i] = static_cast<float>(i % 4) - 1.0f;
  // Sentence 0: all keys padded. Sentence 1: key 0 padded, so under the causal mask query 0
  // sees nothing while query 1 sees key 1.
  const std::vector<uint8_t> pad = {1, 1, 1, 1, 0, 0};
  ops::masked_softmax(s, 2, 1, u8_tensor({2, lk}, pad), true, 0);
  for (int64_t i = 0; i < lq * lk; ++i) EXPECT_EQ(s.f32()[i], 0.0f) << "sentence 0 element " << i;
  const float* s1 = s.f32() + lq * lk;
  for (int64_t j = 0; j < lk; ++j) EXPECT_EQ(s1[j], 0.0f) << "sentence 1 query 0 key " << j;
  EXPECT_EQ(s1[lk + 0], 0.0f);
  EXPECT_FLOAT_EQ(s1[lk + 1], 1.0f);
  EXPECT_EQ(s1[lk + 2], 0.0f);
}

TEST(OpsSoftmax, LargeScoresAreStableAndEqualTheShiftedResult) {
  Tensor big = Tensor::empty({1, 1, 2, 4});
  Tensor small = Tensor::empty({1, 1, 2, 4});
  const float vals[8] = {0.0f, 1.0f, 2.0f, -3.0f, 5.0f, 5.0f, 0.5f, -0.25f};
  for (int i = 0; i < 8; ++i) {
    big.f32()[i] = 1e4f + vals[i];
    small.f32()[i] = vals[i];
  }
  big.f32()[4] = big.f32()[5] = 2e4f;  // second row: two maxima far above the rest
  small.f32()[4] = small.f32()[5] = 1e4f;
  ops::masked_softmax(big, 1, 1, Tensor(), false, 0);
  ops::masked_softmax(small, 1, 1, Tensor(), false, 0);
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(std::isfinite(big.f32()[i])) << i;
    EXPECT_NEAR(big.f32()[i], small.f32()[i], 1e-6) << i;
  }
  const double z = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(-3.0);
  EXPECT_NEAR(big.f32()[1], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(big.f32()[4], 0.5, 1e-6);
  EXPECT_EQ(big.f32()[6], 0.0f);
}

TEST(OpsSoftmax, PadMaskIsIndexedPerBatchNotPerHead) {
  SplitMix64 rng(34);
  const int64_t batch = 3, heads = 2, lq = 2, lk = 4;
  Tensor s = random_tensor({batch, heads, lq, lk}, rng, -3.0f, 3.0f);
  const Tensor s0 = s.clone();
  const std::vector<uint8_t> pad = {0, 0, 0, 1,   // sentence 0: 3 keys
                                    0, 1, 1, 1,   // sentence 1: 1 key
                                    0, 0, 0, 0};  // sentence 2: all 4
  ops::masked_softmax(s, batch, heads, u8_tensor({batch, lk}, pad), false, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        const int64_t row = ((b * heads + h) * lq + i) * lk;
        const auto want = naive_softmax(s0.f32() + row, lk, pad.data() + b * lk, lk);
        for (int64_t j = 0; j < lk; ++j)
          EXPECT_NEAR(s.f32()[row + j], want[static_cast<size_t>(j)], 1e-6)
              << "b " << b << " h " << h << " i " << i << " j " << j;
      }
  // Sentence 1 has a single key: probability 1 on it in every head and query.
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < lq; ++i)
      EXPECT_FLOAT_EQ(s.f32()[((1 * heads + h) * lq + i) * lk], 1.0f);
}

TEST(OpsSoftmax, CausalAndPaddingWithSeveralHeads) {
  SplitMix64 rng(35);
  const int64_t batch = 2, heads = 3, l = 4;
  Tensor s = random_tensor({batch, heads, l, l}, rng, -3.0f, 3.0f);
  const Tensor s0 = s.clone();
  const std::vector<uint8_t> pad = {0, 0, 0, 0, 0, 0, 1, 1};
  ops::masked_softmax(s, batch, heads, u8_tensor({batch, l}, pad), true, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < l; ++i) {
        const int64_t row = ((b * heads + h) * l + i) * l;
        const auto want = naive_softmax(s0.f32() + row, l, pad.data() + b * l, i + 1);
        for (int64_t j = 0; j < l; ++j)
          EXPECT_NEAR(s.f32()[row + j], want[static_cast<size_t>(j)], 1e-6)
              << "b " << b << " h " << h << " i " << i << " j " << j;
      }
}

// sum_j w_j softmax(s)_j in double, for finite differences.
double weighted_softmax(const std::vector<double>& s, const std::vector<double>& w) {
  double mx = -INFINITY;
  for (double v : s) mx = std::max(mx, v);
  double z = 0;
  for (double v : s) z += std::exp(v - mx);
  double out = 0;
  for (size_t j = 0; j < s.size(); ++j) out += w[j] * std::exp(s[j] - mx) / z;
  return out;
}

TEST(OpsSoftmax, BackwardMatchesFiniteDifferencesTimesScale) {
  SplitMix64 rng(36);
  const int64_t rows = 3, n = 6;
  Tensor scores = random_tensor({rows, n}, rng, -2.0f, 2.0f);
  Tensor w = random_tensor({rows, n}, rng);  // dL/dprobs
  // Probs from a naive softmax (the forward is tested above).
  Tensor probs = Tensor::empty({rows, n});
  for (int64_t r = 0; r < rows; ++r) {
    const auto p = naive_softmax(scores.f32() + r * n, n, nullptr, n);
    for (int64_t j = 0; j < n; ++j) probs.f32()[r * n + j] = static_cast<float>(p[size_t(j)]);
  }
  for (float scale : {1.0f, 0.125f}) {
    Tensor d = w.clone();
    ops::softmax_backward(probs, d, scale);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> s(scores.f32() + r * n, scores.f32() + (r + 1) * n);
      const std::vector<double> wr(w.f32() + r * n, w.f32() + (r + 1) * n);
      for (int64_t j = 0; j < n; ++j) {
        const double h = 1e-5, saved = s[size_t(j)];
        s[size_t(j)] = saved + h;
        const double up = weighted_softmax(s, wr);
        s[size_t(j)] = saved - h;
        const double down = weighted_softmax(s, wr);
        s[size_t(j)] = saved;
        const double numeric = (up - down) / (2 * h);
        EXPECT_NEAR(d.f32()[r * n + j], scale * numeric, 1e-5)
            << "scale " << scale << " row " << r << " col " << j;
      }
    }
  }
}

TEST(OpsSoftmax, BackwardOfUniformUpstreamIsZero) {
  // Adding a constant to every dL/dprob changes nothing: the probabilities sum to one.
  Tensor probs = Tensor::empty({1, 4});
  const float p[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  for (int j = 0; j < 4; ++j) probs.f32()[j] = p[j];
  Tensor d = Tensor::empty({1, 4});
  for (int j = 0; j < 4; ++j) d.f32()[j] = 2.5f;
  ops::softmax_backward(probs, d, 1.0f);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(d.f32()[j], 0.0f, 1e-6);
  // One-hot upstream on class 3: dscore_j = p_j (delta_3j - p_3), hand-computed.
  for (int j = 0; j < 4; ++j) d.f32()[j] = j == 3 ? 1.0f : 0.0f;
  ops::softmax_backward(probs, d, 2.0f);
  EXPECT_NEAR(d.f32()[0], 2 * 0.1 * (0 - 0.4), 1e-6);
  EXPECT_NEAR(d.f32()[1], 2 * 0.2 * (0 - 0.4), 1e-6);
  EXPECT_NEAR(d.f32()[2], 2 * 0.3 * (0 - 0.4), 1e-6);
  EXPECT_NEAR(d.f32()[3], 2 * 0.4 * (1 - 0.4), 1e-6);
}

}  // namespace
}  // namespace transduce
