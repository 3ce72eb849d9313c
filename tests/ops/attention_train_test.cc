// The fused training attention (ops/attention_train.h) against the definitions computed in double:
// probabilities, contexts (and a bf16 model's rounded contexts) and the three gradients, with every
// mask, attention dropout, and head sizes that fill whole vectors (the models' 64, read in place)
// or leave remainders (copied).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/bf16.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "ops/attention_train.h"
#include "ops/visible_keys.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using testing::random_tensor;

struct Case {
  int64_t batch, heads, lq, lk, dk, dv;
  bool causal = false;
  int64_t causal_offset = 0, window = 0;
  bool pad = false;        // hide some keys, and every key of the last sentence
  float dropout_p = 0.0f;  // attention dropout with a random keep mask
};

// What the kernels should compute, in double.
struct Reference {
  std::vector<double> probs, context, dq, dk, dv;
};

Reference reference(const Case& c, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& pad, const Tensor& keep, const Tensor& dcontext, float scale) {
  Reference r;
  r.probs.assign(static_cast<size_t>(c.batch * c.heads * c.lq * c.lk), 0.0);
  r.context.assign(static_cast<size_t>(q.numel() / c.dk * c.dv), 0.0);
  r.dq.assign(static_cast<size_t>(q.numel()), 0.0);
  r.dk.assign(static_cast<size_t>(k.numel()), 0.0);
  r.dv.assign(static_cast<size_t>(v.numel()), 0.0);
  const double inv_keep = 1.0 / (1.0 - c.dropout_p);
  auto qa = [&](int64_t b, int64_t i, int64_t h) {
    return (b * c.lq + i) * c.heads * c.dk + h * c.dk;
  };
  auto ka = [&](int64_t b, int64_t j, int64_t h) {
    return (b * c.lk + j) * c.heads * c.dk + h * c.dk;
  };
  auto va = [&](int64_t b, int64_t j, int64_t h) {
    return (b * c.lk + j) * c.heads * c.dv + h * c.dv;
  };
  auto ca = [&](int64_t b, int64_t i, int64_t h) {
    return (b * c.lq + i) * c.heads * c.dv + h * c.dv;
  };
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.lq; ++i) {
        const int64_t row = ((b * c.heads + h) * c.lq + i) * c.lk;
        const ops::KeyRange range =
            ops::visible_keys(i + c.causal_offset, c.lk, c.causal, c.window);
        auto seen = [&](int64_t j) {
          return j >= range.first && j < range.end && !(pad.defined() && pad.u8()[b * c.lk + j]);
        };
        std::vector<double> s(static_cast<size_t>(c.lk), 0.0), dd(s.size(), 0.0);
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.lk; ++j) {
          if (!seen(j)) continue;
          for (int64_t d = 0; d < c.dk; ++d)
            s[j] += double{q.f32()[qa(b, i, h) + d]} * k.f32()[ka(b, j, h) + d];
          s[j] *= scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < c.lk; ++j) sum += seen(j) ? std::exp(s[j] - mx) : 0.0;
        for (int64_t j = 0; j < c.lk; ++j) {
          const double p = seen(j) ? std::exp(s[j] - mx) / sum : 0.0;
          r.probs[row + j] = p;
          const double kept = keep.defined() ? keep.u8()[row + j] * inv_keep : 1.0;
          for (int64_t d = 0; d < c.dv; ++d) {
            const double g = dcontext.f32()[ca(b, i, h) + d];
            r.context[ca(b, i, h) + d] += p * kept * v.f32()[va(b, j, h) + d];
            r.dv[va(b, j, h) + d] += p * kept * g;
            dd[j] += g * v.f32()[va(b, j, h) + d] * kept;  // d(probs)
          }
        }
        double dot = 0;
        for (int64_t j = 0; j < c.lk; ++j) dot += r.probs[row + j] * dd[j];
        for (int64_t j = 0; j < c.lk; ++j) {
          const double ds = scale * r.probs[row + j] * (dd[j] - dot);
          for (int64_t d = 0; d < c.dk; ++d) {
            r.dq[qa(b, i, h) + d] += ds * k.f32()[ka(b, j, h) + d];
            r.dk[ka(b, j, h) + d] += ds * q.f32()[qa(b, i, h) + d];
          }
        }
      }
  return r;
}

// The largest |got - want| relative to the largest |want| (absolute where want is all zeros, as
// the query gradient is over a single key).
double relative_error(const Tensor& got, const std::vector<double>& want) {
  double err = 0, size = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    err = std::max(err, std::abs(got.f32()[i] - want[static_cast<size_t>(i)]));
    size = std::max(size, std::abs(want[static_cast<size_t>(i)]));
  }
  return size > 0 ? err / size : err;
}

void check(const Case& c) {
  SplitMix64 rng(c.batch * 131 + c.lk);
  const Tensor q = random_tensor({c.batch, c.lq, c.heads * c.dk}, rng, -2.0f, 2.0f);
  const Tensor k = random_tensor({c.batch, c.lk, c.heads * c.dk}, rng, -2.0f, 2.0f);
  const Tensor v = random_tensor({c.batch, c.lk, c.heads * c.dv}, rng);
  const Tensor dcontext = random_tensor({c.batch, c.lq, c.heads * c.dv}, rng);
  Tensor pad;
  if (c.pad) {
    pad = Tensor::zeros({c.batch, c.lk}, DType::U8);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < c.lk; ++j)
        pad.u8()[b * c.lk + j] = b == c.batch - 1 || j >= c.lk - b % 5 || rng.uniform() < 0.1f;
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.dk));
  const Tensor probs = Tensor::empty({c.batch, c.heads, c.lq, c.lk});
  ops::attention_probabilities(q, k, c.heads, scale, {pad, c.causal, c.causal_offset, c.window},
                               probs);
  Tensor keep, dropped = probs;
  if (c.dropout_p > 0) {
    keep = Tensor::empty(probs.shape(), DType::U8);
    dropped = Tensor::empty(probs.shape());
    for (int64_t i = 0; i < probs.numel(); ++i) {
      keep.u8()[i] = rng.uniform() >= c.dropout_p;
      dropped.f32()[i] = keep.u8()[i] ? probs.f32()[i] / (1.0f - c.dropout_p) : 0.0f;
    }
  }
  const Tensor context = Tensor::empty(dcontext.shape());
  ops::attention_context(dropped, v, c.heads, context);
  // A bf16 model's context: the same values, rounded as they are written.
  const Tensor context_bf16 = Tensor::empty(dcontext.shape(), DType::BF16);
  ops::attention_context(dropped, v, c.heads, context_bf16);
  for (int64_t i = 0; i < context.numel(); ++i)
    ASSERT_EQ(context_bf16.bf16()[i], float_to_bf16(context.f32()[i])) << "element " << i;
  const ops::AttentionGradients g{Tensor::empty(q.shape()), Tensor::empty(k.shape()),
                                  Tensor::empty(v.shape())};
  ops::attention_backward(dcontext, q, k, v, probs, dropped, keep, c.dropout_p, c.heads, scale, g);

  const Reference want = reference(c, q, k, v, pad, keep, dcontext, scale);
  // fp32 sums of a few dozen terms against double: a few units of float's 6e-8 rounding each.
  EXPECT_LT(relative_error(probs, want.probs), 2e-6);
  EXPECT_LT(relative_error(context, want.context), 2e-6);
  EXPECT_LT(relative_error(g.dq, want.dq), 1e-5);
  EXPECT_LT(relative_error(g.dk, want.dk), 1e-5);
  EXPECT_LT(relative_error(g.dv, want.dv), 2e-6);
  if (c.pad) {  // the last sentence hides every key: its rows are zeros
    for (int64_t i = (c.batch - 1) * c.heads * c.lq * c.lk; i < probs.numel(); ++i) {
      ASSERT_EQ(probs.f32()[i], 0.0f);
    }
  }
}

// The base model's heads over a Multi30k-length batch, threaded: cross-attention shapes.
TEST(AttentionTrain, ModelSizedCrossAttentionWithPaddingAndDropout) {
  check({.batch = 24,
         .heads = 8,
         .lq = 25,
         .lk = 31,
         .dk = 64,
         .dv = 64,
         .pad = true,
         .dropout_p = 0.1f});
}

TEST(AttentionTrain, ModelSizedCausalSelfAttention) {
  check({.batch = 24, .heads = 8, .lq = 27, .lk = 27, .dk = 64, .dv = 64, .causal = true});
}

// Head sizes and lengths that leave partial vectors and row blocks; a window and an offset.
TEST(AttentionTrain, OddSizesWithWindowAndOffset) {
  check({.batch = 5,
         .heads = 3,
         .lq = 7,
         .lk = 41,
         .dk = 20,
         .dv = 12,
         .causal = true,
         .causal_offset = 30,
         .window = 9,
         .pad = true,
         .dropout_p = 0.3f});
  check({.batch = 3, .heads = 2, .lq = 13, .lk = 13, .dk = 8, .dv = 40, .window = 4});
  check({.batch = 2, .heads = 1, .lq = 1, .lk = 1, .dk = 1, .dv = 1});
}

TEST(AttentionTrain, RejectsMismatchedShapes) {
  const Tensor q = Tensor::zeros({2, 5, 16}), k = Tensor::zeros({2, 6, 16});
  EXPECT_THROW(ops::attention_probabilities(q, k, 3, 1.0f, {}, Tensor::empty({2, 3, 5, 6})),
               std::exception);
  EXPECT_THROW(ops::attention_probabilities(q, k, 4, 1.0f, {}, Tensor::empty({2, 4, 5, 5})),
               std::exception);
}

}  // namespace
}  // namespace transduce
