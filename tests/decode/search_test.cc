// Incremental decoding against full recomputation (beam reorders and sentences leaving the batch
// included), and greedy/beam search against hand-worked cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "core/threads.h"
#include "decode/search.h"
#include "support/random_model.h"
#include "support/thread_count.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

ModelConfig small_config(NormPlacement norm = NormPlacement::Post,
                         Positions positions = Positions::Sinusoidal) {
  ModelConfig c;
  c.layers = 2;
  c.d_model = 16;
  c.d_ff = 24;
  c.heads = 2;
  c.d_k = 3;
  c.d_v = 5;
  c.vocab_size = 23;
  c.max_positions = 64;
  c.norm = norm;
  c.positions = positions;
  return c;
}

Tensor ids(std::initializer_list<int32_t> values, int64_t rows) {
  Tensor t = Tensor::empty({rows, static_cast<int64_t>(values.size()) / rows}, DType::I32);
  std::copy(values.begin(), values.end(), t.i32());
  return t;
}

class Incremental : public ::testing::TestWithParam<int> {};

TEST_P(Incremental, StepLogitsEqualTheFullDecoder) {
  ModelConfig c = GetParam() == 0   ? small_config()
                  : GetParam() == 1 ? small_config(NormPlacement::Pre)
                                    : small_config(NormPlacement::Post, Positions::Learned);
  if (GetParam() == 3) c.attention_window = 2;  // restricted self-attention, window < L
  Transformer model(c);
  testing::init_untrained(model, 7);
  const Tensor src = ids({5, 9, 13, 7, 2, 8, 11, 2, 0, 0, 4, 2, 0, 0, 0}, 3);
  const Tensor tgt_in = ids({1, 14, 15, 16, 17, 1, 20, 6, 6, 9, 1, 3, 12, 12, 5}, 3);
  const int64_t B = 3, L = 5, V = c.vocab_size;

  Arena full_arena;
  Context full(full_arena);
  Tensor src_pad = model.padding_mask(full, src);
  Tensor memory = model.encode(full, src, src_pad);
  Tensor tgt_pad = full.zeros({B, L}, DType::U8);
  Tensor logits = model.decode(full, tgt_in, tgt_pad, memory, src_pad);

  Arena cache_arena, history_arena, step_arena;
  Context cctx(cache_arena);
  DecoderCache cache = model.start_decoding(cctx, history_arena, memory, src_pad, L);
  double worst = 0, largest = 0;
  for (int64_t t = 0; t < L; ++t) {
    step_arena.reset();
    Context ctx(step_arena);
    Tensor tokens = ctx.alloc({B}, DType::I32);
    for (int64_t b = 0; b < B; ++b) tokens.i32()[b] = tgt_in.i32()[b * L + t];
    Tensor step = model.decode_step(ctx, tokens, cache);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t v = 0; v < V; ++v) {
        const double want = logits.f32()[(b * L + t) * V + v];
        worst = std::max(worst, std::abs(step.f32()[b * V + v] - want));
        largest = std::max(largest, std::abs(want));
      }
  }
  EXPECT_LE(worst, 1e-5 * largest) << "largest logit " << largest;
  EXPECT_GT(largest, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Variants, Incremental, ::testing::Values(0, 1, 2, 3));

// A beam search's cache: rows take other rows' pasts (DecoderCache::select moves only slot
// numbers) and sentences leave the batch; each row's step logits must still be the full decoder's
// over that row's own prefix. In fp32 to 1e-5; in int8 the cache holds int8 keys and values where
// the full decoder keeps fp32 ones, so within a few percent, and not equal. With a shared start,
// the first step decodes one row per sentence for its whole group (as beam search does).
struct Reordering {
  Precision precision;
  double tolerance;  // of the largest logit (fp32), or of the logits' norm (int8)
  bool shared_start = false;
};

class CacheSelect : public ::testing::TestWithParam<Reordering> {};

TEST_P(CacheSelect, ReorderedAndShrunkRowsEqualTheFullDecoderOfTheirPrefixes) {
  const Reordering r = GetParam();
  // d_k != d_v in fp32; int8 wants products of a realistic size.
  const ModelConfig c =
      r.precision == Precision::FP32 ? small_config() : testing::precision_test_config();
  Transformer model(c);
  testing::init_untrained(model, 11);
  model.set_precision(r.precision);
  const int64_t sentences = 3, group = 3, ls = 6, steps = 7, vocab = c.vocab_size;
  Tensor src = Tensor::empty({sentences, ls}, DType::I32);
  SplitMix64 rng(5);
  for (int64_t i = 0; i < src.numel(); ++i)
    src.i32()[i] = static_cast<int32_t>(rng.randint(4, static_cast<uint64_t>(vocab - 1)));
  src.i32()[ls - 1] = src.i32()[2 * ls - 1] = src.i32()[2 * ls - 2] = kPadId;

  Arena encode_arena, history_arena, step_arena, full_arena;
  Context cctx(encode_arena);
  cctx.inference = true;
  const Tensor src_pad = model.padding_mask(cctx, src);
  const Tensor memory = model.encode(cctx, src, src_pad);
  DecoderCache cache = model.start_decoding(cctx, history_arena, memory, src_pad, steps, group);

  // The full decoder's logits at the last position of `prefix` for sentence s.
  auto full = [&](int64_t s, const std::vector<int32_t>& prefix) {
    full_arena.reset();
    Context ctx(full_arena);
    ctx.inference = true;
    const int64_t lt = static_cast<int64_t>(prefix.size());
    Tensor one_src = src.slice_rows(s, s + 1), tgt = ctx.alloc({1, lt}, DType::I32);
    std::copy(prefix.begin(), prefix.end(), tgt.i32());
    const Tensor pad = model.padding_mask(ctx, one_src);
    const Tensor logits =
        model.decode(ctx, tgt, model.padding_mask(ctx, tgt), model.encode(ctx, one_src, pad), pad);
    return std::vector<float>(logits.f32() + (lt - 1) * vocab, logits.f32() + lt * vocab);
  };

  std::vector<int64_t> sentence_of;  // each row's sentence
  std::vector<std::vector<int32_t>> prefix;
  for (int64_t s = 0; s < sentences; ++s)
    for (int64_t j = 0; j < group; ++j) {
      sentence_of.push_back(s);
      prefix.push_back({kBosId});
    }
  double worst = 0, largest = 0, diff2 = 0, norm2 = 0;
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t n = static_cast<int64_t>(prefix.size());
    // The rows decoded: every row, or at a shared start the first of each group.
    const int64_t stride = r.shared_start && t == 0 ? group : 1;
    step_arena.reset();
    Context ctx(step_arena);
    ctx.inference = true;
    Tensor tokens = ctx.alloc({n / stride}, DType::I32);
    for (int64_t i = 0; i < n / stride; ++i) tokens.i32()[i] = prefix[i * stride].back();
    const Tensor logits = model.decode_step(ctx, tokens, cache);
    ASSERT_EQ(logits.dim(0), n / stride);
    for (int64_t i = 0; i < n / stride; ++i) {
      const std::vector<float> want = full(sentence_of[i * stride], prefix[i * stride]);
      for (int64_t v = 0; v < vocab; ++v) {
        const double d = logits.f32()[i * vocab + v] - double{want[v]};
        worst = std::max(worst, std::fabs(d));
        largest = std::max(largest, std::fabs(double{want[v]}));
        diff2 += d * d;
        norm2 += double{want[v]} * want[v];
      }
    }
    // Each row takes a random row of its sentence's group as its past; after step 2 sentence 1
    // leaves the batch. Then every row appends a token of its own.
    std::vector<int32_t> keep;
    std::vector<int64_t> kept_sentence;
    std::vector<std::vector<int32_t>> kept_prefix;
    for (int64_t g = 0; g < n / group; ++g) {
      if (t == 2 && sentence_of[g * group] == 1) continue;
      for (int64_t j = 0; j < group; ++j) {
        const int64_t parent = g * group + static_cast<int64_t>(rng.randint(0, group - 1));
        keep.push_back(static_cast<int32_t>(parent));
        kept_sentence.push_back(sentence_of[parent]);
        kept_prefix.push_back(prefix[parent]);
        kept_prefix.back().push_back(static_cast<int32_t>(rng.randint(4, vocab - 1)));
      }
    }
    cache.select(keep);
    sentence_of = kept_sentence;
    prefix = kept_prefix;
  }
  ASSERT_GT(largest, 0.1);
  if (r.precision == Precision::FP32) {
    EXPECT_LE(worst, r.tolerance * largest);
  } else {
    const double relative = std::sqrt(diff2 / norm2);
    EXPECT_LE(relative, r.tolerance);
    EXPECT_GT(relative, 1e-5) << "the int8 cache gave fp32's logits";
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, CacheSelect,
                         ::testing::Values(Reordering{Precision::FP32, 1e-5},
                                           Reordering{Precision::INT8, 0.03},
                                           Reordering{Precision::FP32, 1e-5, true},
                                           Reordering{Precision::INT8, 0.03, true}));

TEST(Search, LengthPenaltyIsGnmts) {
  EXPECT_FLOAT_EQ(length_penalty(1, 0.6f), 1.0f);
  EXPECT_NEAR(length_penalty(10, 0.6f), std::pow(15.0 / 6.0, 0.6), 1e-6);  // 1.7329
  EXPECT_NEAR(length_penalty(10, 0.6f), 1.73286, 1e-4);
  EXPECT_FLOAT_EQ(length_penalty(37, 0.0f), 1.0f);
  SearchOptions o;
  EXPECT_EQ(max_output_length(20, o), 70);  // source + 50
  o.max_len_a = 1.5f;
  o.max_len_b = 3;
  EXPECT_EQ(max_output_length(7, o), 13);  // floor(10.5) + 3
}

TEST(Search, BeamOneIsGreedy) {
  for (uint64_t seed : {1, 2, 3}) {
    Transformer model(small_config());
    testing::init_untrained(model, seed);
    const Tensor src = ids({5, 9, 13, 7, 2, 8, 11, 2, 0, 0, 4, 2, 0, 0, 0, 6, 6, 6, 6, 2}, 4);
    SearchOptions o;
    o.max_len_b = 8;
    const std::vector<Hypothesis> greedy = greedy_search(model, src, o);
    o.beam = 1;
    const auto beam = beam_search(model, src, o);
    for (size_t s = 0; s < greedy.size(); ++s) {
      ASSERT_EQ(beam[s].size(), 1u);
      EXPECT_EQ(beam[s][0].tokens, greedy[s].tokens) << "seed " << seed << " sentence " << s;
      EXPECT_NEAR(beam[s][0].score, greedy[s].score, 1e-5);
    }
  }
}

// A vocabulary large enough that a step's sentences are worked on in parallel (decode/search.cc).
ModelConfig wide_vocab_config() {
  ModelConfig c = small_config();
  c.vocab_size = 8192;
  return c;
}

Tensor random_sources(int64_t sentences, int64_t length, int64_t vocab, uint64_t seed) {
  Tensor src = Tensor::empty({sentences, length}, DType::I32);
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < src.numel(); ++i)
    src.i32()[i] = static_cast<int32_t>(rng.randint(4, static_cast<uint64_t>(vocab - 1)));
  for (int64_t s = 0; s < sentences; ++s) src.i32()[s * length + length - 1] = kEosId;
  return src;
}

// The sentences of a step are searched on the thread team: one thread or two, the same outputs.
TEST(Search, ThreadsDoNotChangeWhatIsFound) {
  testing::ThreadCountGuard guard;
  Transformer model(wide_vocab_config());
  testing::init_untrained(model, 3);
  const Tensor src = random_sources(6, 7, 8192, 4);
  SearchOptions o;
  o.max_len_b = 6;
  o.nbest = 2;
  set_threads(1);
  const auto beam1 = beam_search(model, src, o);
  const auto greedy1 = greedy_search(model, src, o);
  set_threads(2);
  const auto beam2 = beam_search(model, src, o);
  const auto greedy2 = greedy_search(model, src, o);
  for (size_t s = 0; s < beam1.size(); ++s) {
    ASSERT_EQ(beam1[s].size(), 2u);
    ASSERT_EQ(beam2[s].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(beam1[s][i].tokens, beam2[s][i].tokens) << "sentence " << s;
      EXPECT_NEAR(beam1[s][i].score, beam2[s][i].score, 1e-5);
    }
    EXPECT_EQ(greedy1[s].tokens, greedy2[s].tokens) << "sentence " << s;
    EXPECT_NEAR(greedy1[s].score, greedy2[s].score, 1e-5);
  }
}

// A constraint that throws on one sentence, while the step's sentences are worked on in parallel:
// the search rethrows it (an exception may not leave an OpenMP region).
TEST(Search, AConstraintsExceptionLeavesTheParallelStep) {
  testing::ThreadCountGuard guard;
  set_threads(2);
  Transformer model(wide_vocab_config());
  testing::init_untrained(model, 3);
  const Tensor src = random_sources(6, 7, 8192, 4);
  SearchOptions o;
  o.max_len_b = 6;
  o.constrain = [](int64_t sentence, std::span<const int32_t> prefix, float*) {
    if (sentence == 4 && prefix.size() == 2) throw std::runtime_error("sentence 4 refused");
  };
  for (int beam : {1, 4}) {
    o.beam = beam;
    try {
      if (beam == 1)
        greedy_search(model, src, o);
      else
        beam_search(model, src, o);
      ADD_FAILURE() << "beam " << beam << ": no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "sentence 4 refused");
    }
  }
}

// A "model" whose step log-probabilities come from a table: constrain overwrites the row.
struct Scripted {
  // (step, previous token) -> {token, log-probability}; everything else is banned.
  std::function<std::vector<std::pair<int32_t, float>>(int64_t step, int32_t previous)> table;
};

// A hypothesis that ends does not narrow the beam: the k best that go on stay live. Here a
// beam that narrowed as hypotheses ended would lose the winner at step 0.
TEST(Search, TheBeamStaysKWideWhenAHypothesisEnds) {
  Transformer model(small_config());
  testing::init_untrained(model, 1);
  const Tensor src = ids({5, 9, 2}, 1);
  SearchOptions o;
  o.beam = 2;
  o.alpha = 2.0f;
  o.min_len_b = 0;
  o.max_len_a = 0.0f;
  o.max_len_b = 3;
  int64_t last_step = -1;
  // Step 0: token 5 -0.1, EOS -0.3, token 6 -0.35. EOS is among the best two: [] ends with
  // score -0.3, and 5 and 6 both go on (a narrowing beam would keep 5 alone).
  // Step 1: after 5, EOS and 7 at -3.0; after 6, EOS -0.01 and 7 -5.0. [6] ends with
  // -0.36 / lp(2) = -0.36 / (7/6)^2 = -0.2645, above [] at -0.3. The best live one, [5 7] at -3.1,
  // can reach at most -3.1 / lp(4) = -3.1 / 1.5^2 = -1.378: the search stops after step 1.
  o.constrain = [&](int64_t, std::span<const int32_t> prefix, float* row) {
    const int64_t step = static_cast<int64_t>(prefix.size());
    last_step = std::max(last_step, step);
    std::fill(row, row + 23, -std::numeric_limits<float>::infinity());
    if (step == 0) {
      row[5] = -0.1f;
      row[kEosId] = -0.3f;
      row[6] = -0.35f;
    } else if (prefix[0] == 5) {
      row[kEosId] = -3.0f;
      row[7] = -3.0f;
    } else {
      row[kEosId] = -0.01f;
      row[7] = -5.0f;
    }
  };
  o.nbest = 2;
  const auto out = beam_search(model, src, o);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].tokens, std::vector<int32_t>{6});
  EXPECT_NEAR(out[0][0].log_prob, -0.36, 1e-5);
  EXPECT_NEAR(out[0][0].score, -0.36 / std::pow(7.0 / 6.0, 2.0), 1e-5);
  EXPECT_EQ(out[0][0].token_log_probs, (std::vector<float>{-0.35f, -0.01f}));
  EXPECT_TRUE(out[0][1].tokens.empty());
  EXPECT_NEAR(out[0][1].score, -0.3, 1e-6);
  EXPECT_EQ(last_step, 1);
}

TEST(Search, StopsAsSoonAsNoLiveHypothesisCanWin) {
  Transformer model(small_config());
  testing::init_untrained(model, 1);
  const Tensor src = ids({5, 9, 2}, 1);
  SearchOptions o;
  o.beam = 4;
  o.max_len_a = 0.0f;
  o.max_len_b = 3;
  int64_t last_step = -1;
  // Step 0: EOS -0.5 is best; the best live one has -3.0. Its score can at best reach
  // -3.0 / lp(3 + 1) = -3.0 / 1.5^0.6 = -2.352 < -0.5: no point going on after step 0.
  o.constrain = [&](int64_t, std::span<const int32_t> prefix, float* row) {
    const int64_t step = static_cast<int64_t>(prefix.size());
    last_step = std::max(last_step, step);
    std::fill(row, row + 23, -std::numeric_limits<float>::infinity());
    row[kEosId] = -0.5f;
    row[5] = -3.0f;
    row[6] = -4.0f;
    row[7] = -5.0f;
  };
  const auto out = beam_search(model, src, o);
  EXPECT_EQ(last_step, 0);
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_TRUE(out[0][0].tokens.empty());
  // With a closer race it must go on: the live -0.6 could still reach -0.6/1.275 > -0.5.
  last_step = -1;
  o.constrain = [&](int64_t, std::span<const int32_t> prefix, float* row) {
    const int64_t step = static_cast<int64_t>(prefix.size());
    last_step = std::max(last_step, step);
    std::fill(row, row + 23, -std::numeric_limits<float>::infinity());
    row[kEosId] = step == 0 ? -0.5f : -0.01f;
    row[5] = -0.6f;
  };
  const auto raced = beam_search(model, src, o);
  EXPECT_GE(last_step, 1);
  // [5] then EOS: -0.61 / lp(2) = -0.556, worse than [] at -0.5, so [] still wins.
  EXPECT_TRUE(raced[0][0].tokens.empty());
}

TEST(Search, OutputsNeverExceedTheMaximumLength) {
  Transformer model(small_config());
  testing::init_untrained(model, 4);
  const Tensor src = ids({5, 9, 13, 2, 8, 2, 0, 0}, 2);
  SearchOptions o;
  o.max_len_a = 0.5f;
  o.max_len_b = 2;  // 4 source tokens -> 4 outputs; 2 -> 3
  // Without EOS until forced, every output has exactly the maximum length.
  o.constrain = [](int64_t, std::span<const int32_t>, float* row) { row[kEosId] = -1e9f; };
  for (int beam : {1, 3}) {
    o.beam = beam;
    const auto out = beam_search(model, src, o);
    EXPECT_EQ(out[0][0].tokens.size(), 4u) << "beam " << beam;
    EXPECT_EQ(out[1][0].tokens.size(), 3u) << "beam " << beam;
  }
  const auto greedy = greedy_search(model, src, o);
  EXPECT_EQ(greedy[0].tokens.size(), 4u);
  EXPECT_EQ(greedy[1].tokens.size(), 3u);
}

// Without a minimum length such a model's outputs are empty; with one, they are that long.
TEST(Search, AModelThatAlwaysPrefersEndOfSentenceStopsAtTheMinimumLength) {
  // Make the decoder's output constant and aligned with EOS's embedding: the last layer norm's
  // gain 0 and bias along E[EOS], which also has the largest norm.
  ModelConfig c = small_config();
  Transformer model(c);
  testing::init_untrained(model, 2);
  float* emb = model.embedding.weight.value.f32();
  const int64_t d = c.d_model;
  for (int64_t j = 0; j < d; ++j) emb[kEosId * d + j] *= 4.0f;
  Param* gain = model.find("decoder.layers.1.ffn_norm.weight");
  Param* bias = model.find("decoder.layers.1.ffn_norm.bias");
  ASSERT_TRUE(gain && bias);
  for (int64_t j = 0; j < d; ++j) {
    gain->value.f32()[j] = 0.0f;
    bias->value.f32()[j] = 10.0f * emb[kEosId * d + j];
  }
  const Tensor src = ids({5, 9, 13, 2, 8, 2, 0, 0}, 2);
  SearchOptions o;
  o.min_len_b = 0;
  for (const auto& h : greedy_search(model, src, o)) EXPECT_TRUE(h.tokens.empty());
  for (const auto& hs : beam_search(model, src, o)) {
    ASSERT_FALSE(hs.empty());
    EXPECT_TRUE(hs[0].tokens.empty());
  }
  // By default an output has a token at least: EOS is banned before it.
  o = SearchOptions{};
  for (const auto& h : greedy_search(model, src, o)) EXPECT_EQ(h.tokens.size(), 1u);
  for (const auto& hs : beam_search(model, src, o)) EXPECT_EQ(hs.at(0).tokens.size(), 1u);
  o.min_len_a = 1.0f;  // 4 and 2 source tokens (EOS counted), plus one
  const auto longer = beam_search(model, src, o);
  EXPECT_EQ(longer[0].at(0).tokens.size(), 5u);
  EXPECT_EQ(longer[1].at(0).tokens.size(), 3u);
}

}  // namespace
}  // namespace transduce
