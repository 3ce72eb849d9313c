// Attention over a decoder's position-major history (ops::store_history, attention_history)
// against attention_inference (itself checked against the unfused training path) over each row's
// past gathered into a tensor of its own: bitwise equal in fp32, at odd shapes and a base model's
// beam (400 rows, 8 heads, 26 positions) at 1, 2 and 3 threads; in bf16 likewise over the rounded
// keys and values. In int8, against fp32 attention
// over the dequantized keys and values (the same numbers but for the order of two scalings), and
// visibly not fp32's own. The cross-attention stores (ops::store_heads) likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "support/gradcheck.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

struct Shape4 {
  int64_t capacity, layers, slots, heads, dk, dv, rows, lk, layer;
};

// x with each head's d values replaced by their int8 quantization times its scale: what an int8
// store holds.
Tensor dequantized(const Tensor& x, int64_t heads) {
  const int64_t vectors = x.numel() / (x.cols() / heads), d = x.cols() / heads;
  Tensor q = Tensor::empty({vectors, d}, DType::I8), scales = Tensor::empty({vectors});
  ops::quantize_rows(x.reshape({vectors, d}), q, scales);
  Tensor out = Tensor::empty(x.shape());
  for (int64_t v = 0; v < vectors; ++v)
    for (int64_t j = 0; j < d; ++j)
      out.f32()[v * d + j] = static_cast<float>(q.i8()[v * d + j]) * scales.f32()[v];
  return out;
}

struct Filled {
  ops::KvHistory history;
  // What was stored at each position of each layer: keys[t][l] [slots, H*dk], values likewise.
  std::vector<std::vector<Tensor>> keys, values;
};

// A history with random keys and values at every position of every layer, and each row's slots
// drawn at random (a beam search's reorders make any pattern).
Filled fill(const Shape4& s, DType element, SplitMix64& rng) {
  Filled f;
  ops::KvHistory& h = f.history;
  h.element = element;
  h.heads = s.heads;
  h.dk = s.dk;
  h.dv = s.dv;
  h.rows = Tensor::empty(
      {s.capacity, s.layers, s.slots, ops::KvHistory::row_bytes(element, s.heads, s.dk, s.dv)},
      DType::U8);
  h.slot_of = Tensor::empty({s.capacity, s.slots}, DType::I32);
  for (int64_t i = 0; i < h.slot_of.numel(); ++i)
    h.slot_of.i32()[i] = static_cast<int32_t>(rng.randint(0, static_cast<uint64_t>(s.slots - 1)));
  f.keys.resize(s.lk);
  f.values.resize(s.lk);
  for (int64_t t = 0; t < s.lk; ++t)
    for (int64_t l = 0; l < s.layers; ++l) {
      f.keys[t].push_back(random_tensor({s.slots, s.heads * s.dk}, rng, -2.0f, 2.0f));
      f.values[t].push_back(random_tensor({s.slots, s.heads * s.dv}, rng, -2.0f, 2.0f));
      ops::store_history(h, l, t, f.keys[t][l], f.values[t][l]);
    }
  return f;
}

// x with every value rounded to bf16: what a bf16 store holds.
Tensor rounded(const Tensor& x) {
  Tensor b = Tensor::empty(x.shape(), DType::BF16), out = Tensor::empty(x.shape());
  ops::to_bf16(x, b);
  for (int64_t i = 0; i < x.numel(); ++i) out.f32()[i] = bf16_to_float(b.bf16()[i]);
  return out;
}

// x as a store of `element` holds it: dequantized from I8, widened from BF16.
Tensor as_stored(const Tensor& x, int64_t heads, DType element) {
  if (element == DType::I8) return dequantized(x, heads);
  if (element == DType::BF16) return rounded(x);
  return x;
}

// Row r's past in layer s.layer, gathered: [rows, lk, width], as a store of `element` holds it.
Tensor gathered(const Filled& f, const Shape4& s, bool values, DType element) {
  const int64_t width = s.heads * (values ? s.dv : s.dk);
  Tensor out = Tensor::empty({s.rows, s.lk, width});
  for (int64_t t = 0; t < s.lk; ++t) {
    const Tensor src = as_stored((values ? f.values : f.keys)[t][s.layer], s.heads, element);
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t slot = f.history.slot_of.i32()[t * s.slots + r];
      std::copy(src.f32() + slot * width, src.f32() + (slot + 1) * width,
                out.f32() + (r * s.lk + t) * width);
    }
  }
  return out;
}

struct Result {
  Tensor context, probs;
};

Result history_attention(const Filled& f, const Shape4& s, const Tensor& q) {
  Result r{Tensor::empty({s.rows, s.heads * s.dv}), Tensor::empty({s.rows, s.heads, 1, s.lk})};
  ops::attention_history(q, f.history, s.layer, s.lk, 0.3f, r.context, r.probs);
  return r;
}

Result reference(const Tensor& keys, const Tensor& values, const Shape4& s, const Tensor& q) {
  Result r{Tensor::empty({s.rows, 1, s.heads * s.dv}), Tensor::empty({s.rows, s.heads, 1, s.lk})};
  ops::attention_inference(q.reshape({s.rows, 1, s.heads * s.dk}), keys, values, s.lk, s.heads,
                           0.3f, Tensor(), false, 0, r.context, r.probs);
  return r;
}

// attention_inference over every row's gathered past, as a store of `element` holds it.
Result reference_over(const Filled& f, const Shape4& s, const Tensor& q, DType element) {
  return reference(gathered(f, s, false, element), gathered(f, s, true, element), s, q);
}

std::vector<float> values_of(const Tensor& t) {
  return std::vector<float>(t.f32(), t.f32() + t.numel());
}

double largest_difference(const Tensor& a, const Tensor& b, double* largest = nullptr) {
  double worst = 0, big = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, double{std::fabs(a.f32()[i] - b.f32()[i])});
    big = std::max(big, double{std::fabs(b.f32()[i])});
  }
  if (largest) *largest = big;
  return worst;
}

// Odd sizes (d_k != d_v, more slots than rows) and a base model's beam of 100 sentences.
const Shape4 kShapes[] = {{9, 3, 7, 3, 5, 7, 5, 6, 1}, {30, 6, 400, 8, 64, 64, 400, 26, 5}};

TEST(AttentionHistory, Fp32EqualsAttentionOverEachRowsGatheredPast) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(41);
  for (const Shape4& s : kShapes) {
    const Filled f = fill(s, DType::F32, rng);
    const Tensor q = random_tensor({s.rows, s.heads * s.dk}, rng);
    const Result want = reference_over(f, s, q, DType::F32);
    for (int threads : {1, 2, 3}) {
      set_threads(threads);
      const Result got = history_attention(f, s, q);
      EXPECT_EQ(values_of(got.context), values_of(want.context))
          << s.rows << " rows, " << threads << " threads";
      EXPECT_EQ(values_of(got.probs), values_of(want.probs))
          << s.rows << " rows, " << threads << " threads";
    }
  }
}

// Restricted self-attention: the new position (lk - 1) attends to the `window` positions before
// it and itself, as attention_inference's windowed causal mask has it.
TEST(AttentionHistory, AWindowKeepsTheLastPositionsOnly) {
  SplitMix64 rng(43);
  const Shape4& s = kShapes[0];
  const Filled f = fill(s, DType::F32, rng);
  const Tensor q = random_tensor({s.rows, s.heads * s.dk}, rng);
  const int64_t window = 2;
  Result got{Tensor::empty({s.rows, s.heads * s.dv}), Tensor::empty({s.rows, s.heads, 1, s.lk})};
  ops::attention_history(q, f.history, s.layer, s.lk, 0.3f, got.context, got.probs, window);
  Result want{Tensor::empty({s.rows, 1, s.heads * s.dv}),
              Tensor::empty({s.rows, s.heads, 1, s.lk})};
  ops::attention_inference(q.reshape({s.rows, 1, s.heads * s.dk}),
                           gathered(f, s, false, DType::F32), gathered(f, s, true, DType::F32),
                           s.lk, s.heads, 0.3f, Tensor(), true, s.lk - 1, want.context, want.probs,
                           window);
  EXPECT_EQ(values_of(got.context), values_of(want.context));
  EXPECT_EQ(values_of(got.probs), values_of(want.probs));
  for (int64_t r = 0; r < s.rows * s.heads; ++r)
    for (int64_t j = 0; j < s.lk; ++j) {
      const float w = got.probs.f32()[r * s.lk + j];
      if (j < s.lk - 1 - window)
        EXPECT_EQ(w, 0.0f) << "position " << j;
      else
        EXPECT_GT(w, 0.0f) << "position " << j;
    }
  // And it differs from attending to the whole past.
  const Result whole = history_attention(f, s, q);
  EXPECT_NE(values_of(got.context), values_of(whole.context));
}

// A store of `element` against fp32 attention over what it holds, at 1, 2 and 3 threads, and
// visibly not over the exact keys and values (the store really was read). int8: a key's scale
// multiplies its dot product instead of each value, a few fp32 roundings. bf16: widening is
// exact, but the compiler may order the vectorised sums of 2-byte elements otherwise.
void expect_history_attends_as_stored(DType element, uint64_t seed) {
  testing::ThreadCountGuard guard;
  SplitMix64 rng(seed);
  for (const Shape4& s : kShapes) {
    const Filled f = fill(s, element, rng);
    const Tensor q = random_tensor({s.rows, s.heads * s.dk}, rng);
    const Result want = reference_over(f, s, q, element),
                 exact = reference_over(f, s, q, DType::F32);
    for (int threads : {1, 2, 3}) {
      set_threads(threads);
      const Result got = history_attention(f, s, q);
      double largest = 0;
      const double worst = largest_difference(got.context, want.context, &largest);
      EXPECT_LE(worst, 1e-5 * largest) << s.rows << " rows, " << threads << " threads";
      EXPECT_GT(largest, 0.1);
      EXPECT_LE(largest_difference(got.probs, want.probs), 1e-5)
          << s.rows << " rows, " << threads << " threads";
      EXPECT_GT(largest_difference(got.context, exact.context), 1e-4 * largest);
    }
  }
}

TEST(AttentionHistory, Int8EqualsFp32AttentionOverTheDequantizedPast) {
  expect_history_attends_as_stored(DType::I8, 43);
}

TEST(AttentionHistory, Bf16EqualsFp32AttentionOverTheRoundedPast) {
  expect_history_attends_as_stored(DType::BF16, 45);
}

// Cross-attention's stores (ops::store_heads): attention_inference over them equals fp32
// attention over what they hold, padding included.
void expect_cross_stores_attend_as_stored(DType element, uint64_t seed) {
  SplitMix64 rng(seed);
  const int64_t batch = 3, lq = 4, ls = 6, heads = 2, dk = 8, dv = 4;
  const Tensor keys = random_tensor({batch * ls, heads * dk}, rng, -3.0f, 3.0f);
  const Tensor values = random_tensor({batch * ls, heads * dv}, rng, -3.0f, 3.0f);
  auto store = [&](const Tensor& x, int64_t d) {
    const Tensor data = Tensor::empty({batch, ls, heads * d}, element);
    ops::HeadVectors out = element == DType::I8
                               ? ops::HeadVectors(data, Tensor::empty({batch, ls, heads}))
                               : ops::HeadVectors(data);
    ops::store_heads(x, heads, out);
    return out;
  };
  const ops::HeadVectors k = store(keys, dk), v = store(values, dv);
  Tensor pad = Tensor::zeros({batch, ls}, DType::U8);
  pad.u8()[ls - 1] = pad.u8()[2 * ls - 2] = 1;
  const Tensor q = random_tensor({batch, lq, heads * dk}, rng);
  Tensor got = Tensor::empty({batch, lq, heads * dv}), want = Tensor::empty(got.shape());
  ops::attention_inference(q, k, v, ls, heads, 0.35f, pad, false, 0, got);
  ops::attention_inference(q, as_stored(keys, heads, element).reshape({batch, ls, heads * dk}),
                           as_stored(values, heads, element).reshape({batch, ls, heads * dv}), ls,
                           heads, 0.35f, pad, false, 0, want);
  double largest = 0;
  const double worst = largest_difference(got, want, &largest);
  EXPECT_LE(worst, 1e-5 * largest);
  EXPECT_GT(largest, 0.1);
}

TEST(AttentionHistory, Int8CrossAttentionStoresEqualTheDequantizedOnes) {
  expect_cross_stores_attend_as_stored(DType::I8, 47);
}

TEST(AttentionHistory, Bf16CrossAttentionStoresEqualTheRoundedOnes) {
  expect_cross_stores_attend_as_stored(DType::BF16, 49);
  // The bf16 store is the rounding, and mixed stores are refused.
  SplitMix64 rng(50);
  const Tensor x = random_tensor({6, 16}, rng);
  const ops::HeadVectors x16(Tensor::empty({1, 6, 16}, DType::BF16));
  ops::store_heads(x, 2, x16);
  const Tensor r = as_stored(x, 2, DType::BF16);
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(bf16_to_float(x16.data.bf16()[i]), r.f32()[i]);
  Tensor out = Tensor::empty({1, 2, 16});
  EXPECT_THROW(ops::attention_inference(random_tensor({1, 2, 16}, rng), x16,
                                        ops::HeadVectors(r.reshape({1, 6, 16})), 6, 2, 0.35f,
                                        Tensor(), false, 0, out),
               Error);
}

TEST(AttentionHistory, OutOfRangeSlotsAndPositionsAreRefused) {
  SplitMix64 rng(53);
  const Shape4 s = kShapes[0];
  Filled f = fill(s, DType::F32, rng);
  const Tensor q = random_tensor({s.rows, s.heads * s.dk}, rng);
  EXPECT_NO_THROW(history_attention(f, s, q));
  f.history.slot_of.i32()[2 * s.slots + 1] = static_cast<int32_t>(s.slots);
  EXPECT_THROW(history_attention(f, s, q), Error);
  EXPECT_THROW(ops::store_history(f.history, 0, s.capacity, f.keys[0][0], f.values[0][0]), Error);
  EXPECT_THROW(ops::store_history(f.history, s.layers, 0, f.keys[0][0], f.values[0][0]), Error);
  // Keys of the wrong width.
  EXPECT_THROW(ops::store_history(f.history, 0, 0, f.values[0][0], f.values[0][0]), Error);
}

}  // namespace
}  // namespace transduce
