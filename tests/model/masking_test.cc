// The masks really hide what they should: the future from the decoder, padding from everyone.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/rng.h"
#include "model/transformer.h"

namespace transduce {
namespace {

ModelConfig config() {
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 2;
  c.d_model = 32;
  c.d_ff = 48;
  c.heads = 4;
  c.d_k = c.d_v = 8;
  c.vocab_size = 50;
  c.max_positions = 64;
  return c;
}

Batch make_batch(std::vector<int32_t> src, std::vector<int32_t> tin, std::vector<int32_t> tout,
                 int64_t b) {
  Batch batch{Tensor::empty({b, static_cast<int64_t>(src.size()) / b}, DType::I32),
              Tensor::empty({b, static_cast<int64_t>(tin.size()) / b}, DType::I32),
              Tensor::empty({b, static_cast<int64_t>(tout.size()) / b}, DType::I32)};
  std::copy(src.begin(), src.end(), batch.src.i32());
  std::copy(tin.begin(), tin.end(), batch.tgt_in.i32());
  std::copy(tout.begin(), tout.end(), batch.tgt_out.i32());
  return batch;
}

Tensor logits_of(Transformer& model, const Batch& batch, double* loss = nullptr) {
  Arena arena;
  Context ctx(arena);
  auto sums = model.forward(ctx, batch);
  if (loss) *loss = sums.loss / sums.tokens;
  return model.logits().clone();
}

TEST(Masking, ChangingALaterTargetTokenLeavesEarlierPositionsUnchanged) {
  Transformer model(config());
  model.init_parameters(3);
  const std::vector<int32_t> src = {5, 9, 13, 7, 2, 0, 8, 11, 12, 6, 21, 2};
  std::vector<int32_t> tin = {1, 14, 15, 16, 17, 18, 1, 30, 31, 32, 33, 34};
  const std::vector<int32_t> tout = {14, 15, 16, 17, 18, 2, 30, 31, 32, 33, 34, 2};
  Tensor before = logits_of(model, make_batch(src, tin, tout, 2));
  const int changed = 3;  // decoder input position changed in both sentences
  tin[changed] = 40;
  tin[6 + changed] = 41;
  Tensor after = logits_of(model, make_batch(src, tin, tout, 2));
  const int64_t V = 50, L = 6;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < L; ++t) {
      double diff = 0;
      for (int64_t v = 0; v < V; ++v)
        diff = std::max(diff, std::abs(double{before.f32()[(b * L + t) * V + v]} -
                                       after.f32()[(b * L + t) * V + v]));
      if (t < changed)
        EXPECT_LE(diff, 1e-6) << "sentence " << b << " position " << t << " saw the future";
      else
        EXPECT_GT(diff, 1e-4) << "sentence " << b << " position " << t << " ignored its input";
    }
}

TEST(Masking, WhatSitsAtPaddedSourcePositionsIsInvisible) {
  // Encoder self-attention and the decoder's cross-attention must ignore padded source positions:
  // rewriting the encoder input there changes no unpadded encoder output and no decoder output.
  Transformer model(config());
  model.init_parameters(4);
  const int64_t d = model.config().d_model;
  SplitMix64 rng(8);
  Tensor src_pad = Tensor::zeros({2, 5}, DType::U8), tgt_pad = Tensor::zeros({2, 3}, DType::U8);
  src_pad.u8()[1 * 5 + 3] = src_pad.u8()[1 * 5 + 4] = 1;  // sentence 1 has 3 real tokens
  Tensor x = Tensor::empty({2, 5, d}), y = Tensor::empty({2, 3, d});
  for (int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = rng.uniform(-1, 1);
  for (int64_t i = 0; i < y.numel(); ++i) y.f32()[i] = rng.uniform(-1, 1);
  auto run = [&](Tensor& memory_out) {
    Arena arena;
    Context ctx(arena);
    Tensor memory = model.encoder.forward(ctx, x, src_pad);
    memory_out = memory.clone();
    return model.decoder.forward(ctx, y, tgt_pad, memory, src_pad).clone();
  };
  Tensor mem_a, mem_b;
  Tensor out_a = run(mem_a);
  for (int64_t j = 0; j < d; ++j) x.f32()[(1 * 5 + 4) * d + j] += 5.0f;  // a padded position
  Tensor out_b = run(mem_b);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t l = 0; l < 5; ++l) {
      if (src_pad.u8()[b * 5 + l]) continue;
      for (int64_t j = 0; j < d; ++j)
        EXPECT_EQ(mem_a.f32()[(b * 5 + l) * d + j], mem_b.f32()[(b * 5 + l) * d + j]);
    }
  for (int64_t i = 0; i < out_a.numel(); ++i) EXPECT_EQ(out_a.f32()[i], out_b.f32()[i]);
  // Control: the same change at an unpadded position is seen.
  for (int64_t j = 0; j < d; ++j) x.f32()[(1 * 5 + 1) * d + j] += 5.0f;
  Tensor mem_c;
  Tensor out_c = run(mem_c);
  double diff = 0;
  for (int64_t i = 0; i < out_a.numel(); ++i)
    diff = std::max(diff, std::abs(double{out_a.f32()[i]} - out_c.f32()[i]));
  EXPECT_GT(diff, 1e-3);
}

TEST(Masking, PaddingRowsOfOneSentenceDoNotAffectAnother) {
  // Sentence 0 alone, and sentence 0 batched with a longer, padded neighbour: same logits.
  Transformer model(config());
  model.init_parameters(5);
  Tensor alone = logits_of(model, make_batch({5, 9, 2}, {1, 14, 15}, {14, 15, 2}, 1));
  Tensor batched =
      logits_of(model, make_batch({5, 9, 2, 0, 0, 8, 11, 12, 6, 2}, {1, 14, 15, 0, 1, 30, 31, 32},
                                  {14, 15, 2, 0, 30, 31, 32, 2}, 2));
  // Sentence 0 is now length 5 (src) and 4 (tgt), padded: its first 3 target positions must match.
  const int64_t V = 50;
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(alone.f32()[t * V + v], batched.f32()[t * V + v], 1e-5) << t << "," << v;
}

// Restricted self-attention (--attention-window R): with N layers an output can only depend on
// inputs within N * R positions (and, in the decoder, not after it). Changing the token at
// position p leaves every position further away bitwise as it was, in training's forward pass
// and in inference's fused kernels; without a window the change reaches them.
struct WindowRun {
  Tensor memory, logits;  // [L, d] encoder output and [L, V] decoder logits of one sentence
};

WindowRun run_window_model(Transformer& model, const std::vector<int32_t>& src,
                           const std::vector<int32_t>& tin, bool inference) {
  const int64_t L = static_cast<int64_t>(src.size());
  Tensor s = Tensor::empty({1, L}, DType::I32), t = Tensor::empty({1, L}, DType::I32);
  std::copy(src.begin(), src.end(), s.i32());
  std::copy(tin.begin(), tin.end(), t.i32());
  Arena arena;
  Context ctx(arena);
  ctx.inference = inference;
  const Tensor src_pad = model.padding_mask(ctx, s);
  const Tensor memory = model.encode(ctx, s, src_pad);
  const Tensor logits = model.decode(ctx, t, ctx.zeros({1, L}, DType::U8), memory, src_pad);
  return {memory.clone(), logits.clone()};
}

// Per position, the largest change of a row of [L, width].
std::vector<double> changes(const Tensor& a, const Tensor& b, int64_t L) {
  const int64_t width = a.numel() / L;
  std::vector<double> out(static_cast<size_t>(L), 0.0);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t k = 0; k < width; ++k)
      out[static_cast<size_t>(i)] =
          std::max(out[static_cast<size_t>(i)],
                   std::abs(double{a.f32()[i * width + k]} - b.f32()[i * width + k]));
  return out;
}

TEST(Masking, PositionsBeyondTheAttentionWindowCannotChangeAnOutput) {
  const std::vector<int32_t> src = {5, 9, 13, 7, 21, 8, 11, 12, 6, 30, 17, 2};
  const std::vector<int32_t> tin = {1, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25};
  const int64_t L = 12, p = 5;
  for (int window : {0, 1, 2})
    for (bool inference : {false, true}) {
      ModelConfig c = config();  // 2 layers: a reach of 2 * window
      c.attention_window = window;
      Transformer model(c);
      model.init_parameters(5);
      const WindowRun before = run_window_model(model, src, tin, inference);
      std::vector<int32_t> src2 = src, tin2 = tin;
      src2[p] = 40;
      tin2[p] = 41;
      const WindowRun after = run_window_model(model, src2, tin2, inference);
      const int64_t reach = 2 * window;
      const std::vector<double> enc = changes(before.memory, after.memory, L);
      for (int64_t i = 0; i < L; ++i) {
        const bool far = window > 0 && std::abs(i - p) > reach;
        if (far)
          EXPECT_EQ(enc[i], 0.0) << "window " << window << ": encoder position " << i
                                 << " saw position " << p;
        else
          EXPECT_GT(enc[i], 1e-6) << "window " << window << ": encoder position " << i;
      }
      // The decoder: its own input changed at p; the encoder's change reaches it through
      // cross-attention, which is not restricted, so only the target side is compared: the same
      // source for both runs.
      const WindowRun target_only = run_window_model(model, src, tin2, inference);
      const std::vector<double> dec = changes(before.logits, target_only.logits, L);
      for (int64_t i = 0; i < L; ++i) {
        const bool hidden = i < p || (window > 0 && i - p > reach);
        if (hidden)
          EXPECT_EQ(dec[i], 0.0) << "window " << window << ": decoder position " << i
                                 << " saw position " << p;
        else
          EXPECT_GT(dec[i], 1e-6) << "window " << window << ": decoder position " << i;
      }
    }
}

TEST(Masking, TheAttentionWindowIsPartOfTheConfig) {
  ModelConfig c = config();
  c.attention_window = 16;
  const nlohmann::json j = c;
  EXPECT_EQ(j["attention_window"], 16);
  EXPECT_EQ(j.get<ModelConfig>().attention_window, 16);
  nlohmann::json old = j;
  old.erase("attention_window");  // a model from before windows: full attention
  EXPECT_EQ(old.get<ModelConfig>().attention_window, 0);
  c.attention_window = -1;
  EXPECT_THROW(c.validate(), Error);
}

// Word dropout zeroes a token's embedding whole in training: with a fixed seed (the same masks),
// what stands at a dropped position cannot change the loss, and every kept token does. Source
// and decoder input alike; at the rates given, both kinds occur on this batch.
TEST(Masking, ADroppedWordCannotChangeTheLossAKeptOneDoes) {
  const std::vector<int32_t> src = {5, 9, 13, 7, 2, 0, 8, 11, 12, 6, 21, 2};
  const std::vector<int32_t> tin = {1, 14, 15, 16, 17, 18, 1, 30, 31, 32, 33, 34};
  const std::vector<int32_t> tout = {14, 15, 16, 17, 18, 2, 30, 31, 32, 33, 34, 2};
  for (const bool source : {true, false}) {
    ModelConfig c = config();
    (source ? c.src_word_dropout : c.tgt_word_dropout) = 0.4f;
    Transformer model(c);
    model.init_parameters(3);
    auto training_loss = [&](const Batch& batch) {
      Arena arena;
      Context ctx(arena, /*train=*/true, /*dropout_seed=*/17);
      const auto sums = model.forward(ctx, batch);
      return sums.loss / sums.tokens;
    };
    const double base = training_loss(make_batch(src, tin, tout, 2));
    int unchanged = 0, changed = 0;
    for (size_t i = 0; i < src.size(); ++i) {
      if ((source ? src[i] : tin[i]) == 0) continue;  // padding: invisible anyway
      std::vector<int32_t> s = src, t = tin;
      (source ? s[i] : t[i]) = 45;
      const double loss = training_loss(make_batch(s, t, tout, 2));
      if (loss == base)
        ++unchanged;
      else if (std::abs(loss - base) > 1e-7)
        ++changed;
    }
    const int tokens = source ? 11 : 12;
    EXPECT_EQ(unchanged + changed, tokens) << (source ? "source" : "target");
    EXPECT_GT(unchanged, 0) << (source ? "source" : "target") << ": no word was dropped";
    EXPECT_GT(changed, 0) << (source ? "source" : "target") << ": every word was dropped";

    // Not training (validation, translation): every word counts, and the logits are those of
    // the same weights without word dropout.
    ModelConfig plain = config();
    Transformer reference(plain);
    reference.init_parameters(3);
    const Tensor a = logits_of(model, make_batch(src, tin, tout, 2));
    const Tensor b = logits_of(reference, make_batch(src, tin, tout, 2));
    ASSERT_EQ(a.numel(), b.numel());
    for (int64_t k = 0; k < a.numel(); ++k) ASSERT_EQ(a.f32()[k], b.f32()[k]) << k;
  }
}

TEST(Masking, WordDropoutIsPartOfTheConfig) {
  ModelConfig c = config();
  EXPECT_FALSE(nlohmann::json(c).contains("src_word_dropout"));  // unused: the file as before
  c.src_word_dropout = 0.1f;
  c.tgt_word_dropout = 0.2f;
  const nlohmann::json j = c;
  EXPECT_FLOAT_EQ(j.get<ModelConfig>().src_word_dropout, 0.1f);
  EXPECT_FLOAT_EQ(j.get<ModelConfig>().tgt_word_dropout, 0.2f);
  c.tgt_word_dropout = 1.0f;
  try {
    c.validate();
    ADD_FAILURE() << "a word dropout of 1 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tgt-word-dropout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace transduce
