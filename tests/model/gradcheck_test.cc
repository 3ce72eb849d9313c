// Every module's backward against central finite differences of its forward.
#include <gtest/gtest.h>

#include "model/attention.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "model/feed_forward.h"
#include "model/linear.h"
#include "model/residual.h"
#include "model/transformer.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using testing::dot;
using testing::expect_gradients_match;
using testing::GradTarget;
using testing::random_tensor;

ModelConfig small_config() {
  ModelConfig c;
  c.layers = 2;
  c.d_model = 8;
  c.d_ff = 12;
  c.heads = 2;
  c.d_k = 3;  // d_k != d_model / h on purpose (Table 3 rows A, B)
  c.d_v = 5;
  c.dropout = 0.0f;
  c.vocab_size = 11;
  c.max_positions = 16;
  return c;
}

void randomize(const ParamList& params, SplitMix64& rng) {
  for (Param* p : params) {
    const bool gain =
        p->name.find("norm") != std::string::npos && p->name.find(".weight") != std::string::npos;
    testing::fill_uniform(p->value, rng, gain ? 0.5f : -0.6f, gain ? 1.5f : 0.6f);
    p->grad.fill_zero();
  }
}

std::vector<GradTarget> param_targets(const ParamList& params) {
  std::vector<GradTarget> t;
  for (Param* p : params) t.push_back({p->name, p->value, p->grad});
  return t;
}

// U8 [B, L] mask with the last pad[b] positions of sentence b hidden.
Tensor tail_padding(int64_t batch, int64_t len, std::initializer_list<int64_t> pads) {
  Tensor m = Tensor::zeros({batch, len}, DType::U8);
  int64_t b = 0;
  for (int64_t p : pads) {
    for (int64_t j = len - p; j < len; ++j) m.u8()[b * len + j] = 1;
    ++b;
  }
  return m;
}

TEST(GradCheck, Linear) {
  SplitMix64 rng(1);
  Linear lin("lin", 5, 3);
  ParamList params;
  lin.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({2, 4, 5}, rng), r = random_tensor({2, 4, 3}, rng);
  auto loss = [&] {
    Arena a;
    Context ctx(a);
    return dot(lin.forward(ctx, x), r);
  };
  Arena a;
  Context ctx(a);
  lin.forward(ctx, x);
  Tensor dx = lin.backward(ctx, r);
  auto targets = param_targets(params);
  targets.push_back({"x", x, dx});
  expect_gradients_match(loss, targets);
}

TEST(GradCheck, LinearAccumulatesIntoGivenBuffer) {
  SplitMix64 rng(2);
  Linear lin("lin", 4, 3);
  ParamList params;
  lin.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({6, 4}, rng), r = random_tensor({6, 3}, rng);
  Arena a;
  Context ctx(a);
  lin.forward(ctx, x);
  Tensor fresh = lin.backward(ctx, r);
  Tensor acc = random_tensor({6, 4}, rng), before = acc.clone();
  lin.backward(ctx, r, acc);
  for (int64_t i = 0; i < acc.numel(); ++i)
    EXPECT_NEAR(acc.f32()[i], before.f32()[i] + fresh.f32()[i], 1e-6);
}

TEST(GradCheck, LayerNorm) {
  SplitMix64 rng(3);
  LayerNorm ln("ln", 7, 1e-5f);
  ParamList params;
  ln.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({3, 2, 7}, rng, -2.0f, 2.0f), r = random_tensor({3, 2, 7}, rng);
  auto loss = [&] {
    Arena a;
    Context ctx(a);
    return dot(ln.forward(ctx, x), r);
  };
  Arena a;
  Context ctx(a);
  ln.forward(ctx, x);
  Tensor dx = ln.backward(ctx, r);
  auto targets = param_targets(params);
  targets.push_back({"x", x, dx});
  expect_gradients_match(loss, targets);
}

TEST(GradCheck, FeedForwardWithReluDropout) {
  SplitMix64 rng(4);
  ModelConfig c = small_config();
  c.relu_dropout = 0.3f;
  FeedForward ffn("ffn", c);
  ParamList params;
  ffn.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({2, 3, c.d_model}, rng), r = random_tensor({2, 3, c.d_model}, rng);
  // A fixed seed replays the same dropout mask on every evaluation.
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 99);
    return dot(ffn.forward(ctx, x), r);
  };
  Arena a;
  Context ctx(a, true, 99);
  ffn.forward(ctx, x);
  Tensor dx = ffn.backward(ctx, r);
  auto targets = param_targets(params);
  targets.push_back({"x", x, dx});
  expect_gradients_match(loss, targets);
}

struct AttentionCase {
  const char* name;
  bool self;
  bool causal;
  float attention_dropout;
  int window = 0;  // restricted self-attention
};

void PrintTo(const AttentionCase& c, std::ostream* os) {
  *os << c.name;
}

class AttentionGradCheck : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGradCheck, InputsAndWeights) {
  const AttentionCase& k = GetParam();
  SplitMix64 rng(5);
  ModelConfig c = small_config();
  c.attention_dropout = k.attention_dropout;
  c.attention_window = k.window;
  MultiHeadAttention attn("attn", c);
  ParamList params;
  attn.collect(params);
  randomize(params, rng);
  const int64_t batch = 2, lq = 4, lk = k.self ? 4 : 6;
  Tensor xq = random_tensor({batch, lq, c.d_model}, rng);
  Tensor xkv = k.self ? xq : random_tensor({batch, lk, c.d_model}, rng);
  Tensor pad = tail_padding(batch, lk, {0, 2});
  Tensor r = random_tensor({batch, lq, c.d_model}, rng);
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 5);
    return dot(attn.forward(ctx, xq, xkv, pad, k.causal), r);
  };
  Arena a;
  Context ctx(a, true, 5);
  attn.forward(ctx, xq, xkv, pad, k.causal);
  Tensor dkv = k.self ? Tensor() : ctx.zeros(xkv.shape());
  Tensor dxq = attn.backward(ctx, r, dkv);
  auto targets = param_targets(params);
  targets.push_back({k.self ? "x" : "xq", xq, dxq});
  if (!k.self) targets.push_back({"xkv", xkv, dkv});
  expect_gradients_match(loss, targets);
}

INSTANTIATE_TEST_SUITE_P(
    Masks, AttentionGradCheck,
    ::testing::Values(AttentionCase{"SelfPadded", true, false, 0.0f},
                      AttentionCase{"SelfCausalPadded", true, true, 0.0f},
                      AttentionCase{"CrossPadded", false, false, 0.0f},
                      AttentionCase{"SelfCausalWithAttentionDropout", true, true, 0.2f},
                      AttentionCase{"SelfWindowedPadded", true, false, 0.0f, 1},
                      AttentionCase{"SelfCausalWindowed", true, true, 0.0f, 1}),
    [](const auto& info) { return std::string(info.param.name); });

// Restricted self-attention over a sequence long enough for training to compute its scores in
// several bands (blocks of 64 queries): the gradients still agree with finite differences.
TEST(GradCheck, WindowedSelfAttentionInBands) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    SplitMix64 rng(6);
    ModelConfig c = small_config();
    c.attention_window = 3;
    MultiHeadAttention attn("attn", c);
    ParamList params;
    attn.collect(params);
    randomize(params, rng);
    const int64_t batch = 2, length = 150;
    Tensor x = random_tensor({batch, length, c.d_model}, rng);
    Tensor pad = tail_padding(batch, length, {0, 7});
    Tensor r = random_tensor({batch, length, c.d_model}, rng);
    auto loss = [&] {
      Arena a;
      Context ctx(a, true, 5);
      return dot(attn.forward(ctx, x, x, pad, causal), r);
    };
    Arena a;
    Context ctx(a, true, 5);
    attn.forward(ctx, x, x, pad, causal);
    Tensor dx = attn.backward(ctx, r);
    auto targets = param_targets(params);
    targets.push_back({"x", x, dx});
    testing::GradCheckOptions o;
    o.samples = 12;
    expect_gradients_match(loss, targets, o);
  }
}

class ResidualGradCheck : public ::testing::TestWithParam<NormPlacement> {};

TEST_P(ResidualGradCheck, AroundALinearSublayerWithDropout) {
  SplitMix64 rng(6);
  ModelConfig c = small_config();
  c.norm = GetParam();
  c.dropout = 0.25f;
  ResidualNorm res("res", c);
  Linear sub("sub", c.d_model, c.d_model);
  ParamList params;
  res.collect(params);
  sub.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({2, 3, c.d_model}, rng), r = random_tensor({2, 3, c.d_model}, rng);
  auto run = [&](Context& ctx) { return res.leave(ctx, x, sub.forward(ctx, res.enter(ctx, x))); };
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 11);
    return dot(run(ctx), r);
  };
  Arena a;
  Context ctx(a, true, 11);
  run(ctx);
  // Through backward(), so that post-LN's residual gradient takes the sub-layer's in place.
  Tensor dx = res.backward(
      ctx, r, [&](const Tensor& d, const Tensor& into) { return sub.backward(ctx, d, into); });
  auto targets = param_targets(params);
  targets.push_back({"x", x, dx});
  expect_gradients_match(loss, targets);
}

INSTANTIATE_TEST_SUITE_P(Placements, ResidualGradCheck,
                         ::testing::Values(NormPlacement::Post, NormPlacement::Pre),
                         [](const auto& info) { return norm_name(info.param); });

TEST(GradCheck, EncoderLayer) {
  SplitMix64 rng(7);
  ModelConfig c = small_config();
  c.dropout = 0.1f;
  EncoderLayer layer("enc", c);
  ParamList params;
  layer.collect(params);
  randomize(params, rng);
  Tensor x = random_tensor({2, 5, c.d_model}, rng), r = random_tensor({2, 5, c.d_model}, rng);
  Tensor pad = tail_padding(2, 5, {1, 3});
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 3);
    return dot(layer.forward(ctx, x, pad), r);
  };
  Arena a;
  Context ctx(a, true, 3);
  layer.forward(ctx, x, pad);
  Tensor dx = layer.backward(ctx, r);
  auto targets = param_targets(params);
  targets.push_back({"x", x, dx});
  expect_gradients_match(loss, targets);
}

TEST(GradCheck, DecoderLayerPreNorm) {
  SplitMix64 rng(8);
  ModelConfig c = small_config();
  c.norm = NormPlacement::Pre;
  c.dropout = 0.1f;
  DecoderLayer layer("dec", c);
  ParamList params;
  layer.collect(params);
  randomize(params, rng);
  Tensor y = random_tensor({2, 4, c.d_model}, rng), r = random_tensor({2, 4, c.d_model}, rng);
  Tensor memory = random_tensor({2, 6, c.d_model}, rng);
  Tensor tgt_pad = tail_padding(2, 4, {0, 1}), src_pad = tail_padding(2, 6, {2, 0});
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 4);
    return dot(layer.forward(ctx, y, tgt_pad, memory, src_pad), r);
  };
  Arena a;
  Context ctx(a, true, 4);
  layer.forward(ctx, y, tgt_pad, memory, src_pad);
  Tensor dmemory = ctx.zeros(memory.shape());
  Tensor dy = layer.backward(ctx, r, dmemory);
  auto targets = param_targets(params);
  targets.push_back({"y", y, dy});
  targets.push_back({"memory", memory, dmemory});
  expect_gradients_match(loss, targets);
}

// A right-padded batch: 2 sentences, source lengths 5 and 3, target lengths 4 and 2.
Batch small_batch(int vocab) {
  Batch b;
  b.src = Tensor::empty({2, 5}, DType::I32);
  b.tgt_in = Tensor::empty({2, 4}, DType::I32);
  b.tgt_out = Tensor::empty({2, 4}, DType::I32);
  const int32_t src[] = {4, 7, 3, 9, 2, 5, 8, 2, 0, 0};
  const int32_t tin[] = {1, 6, 4, 10, 1, 3, 0, 0};
  const int32_t tout[] = {6, 4, 10, 2, 3, 2, 0, 0};
  std::copy(src, src + 10, b.src.i32());
  std::copy(tin, tin + 8, b.tgt_in.i32());
  std::copy(tout, tout + 8, b.tgt_out.i32());
  for (int i = 0; i < 10; ++i) EXPECT_LT(src[i], vocab);
  return b;
}

struct ModelCase {
  const char* name;
  NormPlacement norm;
  Positions positions;
  float dropout;
  int window = 0;
  float word_dropout = 0;  // source and target
};

void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << c.name;
}

class TransformerGradCheck : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TransformerGradCheck, LossAgainstEveryParameter) {
  const ModelCase& k = GetParam();
  SplitMix64 rng(9);
  ModelConfig c = small_config();
  c.norm = k.norm;
  c.positions = k.positions;
  c.dropout = k.dropout;
  c.attention_window = k.window;
  c.src_word_dropout = c.tgt_word_dropout = k.word_dropout;
  Transformer model(c);
  randomize(model.parameters(), rng);
  Batch batch = small_batch(c.vocab_size);
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 21);
    auto sums = model.forward(ctx, batch);
    return sums.loss / sums.tokens;
  };
  Arena a;
  Context ctx(a, true, 21);
  auto sums = model.forward(ctx, batch);
  ASSERT_EQ(sums.tokens, 6);
  model.backward(ctx, 1.0f / static_cast<float>(sums.tokens));
  testing::GradCheckOptions o;
  o.samples = 4;
  expect_gradients_match(loss, param_targets(model.parameters()), o);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, TransformerGradCheck,
    ::testing::Values(
        ModelCase{"PostNormSinusoidal", NormPlacement::Post, Positions::Sinusoidal, 0.0f},
        ModelCase{"PreNormLearned", NormPlacement::Pre, Positions::Learned, 0.0f},
        ModelCase{"PostNormWithDropout", NormPlacement::Post, Positions::Sinusoidal, 0.1f},
        ModelCase{"AttentionWindow1", NormPlacement::Post, Positions::Sinusoidal, 0.0f, 1},
        ModelCase{"WordDropout", NormPlacement::Post, Positions::Learned, 0.1f, 0, 0.3f}),
    [](const auto& info) { return std::string(info.param.name); });

// R-Drop through the whole model: the batch twice with dropout, so that the two passes differ,
// and the loss of both passes' cross-entropy plus alpha times their symmetric KL divergence
// (its value from the op, whose forward is checked against the definition in
// cross_entropy_test.cc), against every parameter.
TEST(GradCheck, TransformerWithRDrop) {
  SplitMix64 rng(9);
  ModelConfig c = small_config();
  c.dropout = 0.1f;
  Transformer model(c);
  randomize(model.parameters(), rng);
  const Batch batch = repeated_twice(small_batch(c.vocab_size));
  const float alpha = 3.0f;
  auto loss = [&] {
    Arena a;
    Context ctx(a, true, 21);
    const auto sums = model.forward(ctx, batch);
    const Tensor logits = model.logits().clone();
    const auto kl = ops::consistency_loss_train(logits, batch.tgt_out, c.pad_id, c.label_smoothing,
                                                alpha, 0.0f);
    return (sums.loss + alpha * kl.consistency) / sums.tokens;
  };
  Arena a;
  Context ctx(a, true, 21);
  const auto sums = model.train_step(ctx, batch, 1.0f / 12, alpha);
  ASSERT_EQ(sums.tokens, 12);
  EXPECT_GT(sums.consistency, 1e-3) << "dropout should make the passes differ";
  testing::GradCheckOptions o;
  o.samples = 4;
  expect_gradients_match(loss, param_targets(model.parameters()), o);
}

}  // namespace
}  // namespace transduce
