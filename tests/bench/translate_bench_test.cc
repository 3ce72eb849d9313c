#include "bench/translate_bench.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/rng.h"
#include "text/special_ids.h"

namespace transduce::bench {
namespace {

TEST(TranslateBenchSources, CountTotalAndRange) {
  const auto sources = make_decode_sources();
  ASSERT_EQ(sources.size(), 500u);
  int64_t words = 0;
  for (const auto& s : sources) {
    EXPECT_GE(s.size(), 15u);
    EXPECT_LE(s.size(), 25u);
    words += static_cast<int64_t>(s.size());
    for (int32_t w : s) {
      EXPECT_GE(w, 4);
      EXPECT_LE(w, 7999);
    }
  }
  EXPECT_EQ(words, 10058);
  EXPECT_EQ(words, kDecodeSourceWords);
  EXPECT_EQ(words + 500, kDecodeOutputTokens);
}

TEST(TranslateBenchSources, FollowOneSplitMix64Stream) {
  // By hand from BENCHMARKS.md's formulas (splitmix64(1), randint(lo, hi) = lo + next() % (hi -
  // lo + 1)): L_0 = 24, then 4411, 2570, 6743, 6641, ...; L_1 = 21, then 3641, 3035 (3rd), ...
  const auto sources = make_decode_sources();
  ASSERT_EQ(sources[0].size(), 24u);
  EXPECT_EQ(sources[0][0], 4411);
  EXPECT_EQ(sources[0][1], 2570);
  EXPECT_EQ(sources[0][2], 6743);
  EXPECT_EQ(sources[0][3], 6641);
  ASSERT_EQ(sources[1].size(), 21u);
  EXPECT_EQ(sources[1][0], 3641);
  EXPECT_EQ(sources[1][2], 3035);

  // The whole stream, drawn independently with the raw generator.
  SplitMix64 rng(1);
  auto draw = [&](uint64_t lo, uint64_t hi) { return lo + rng.next() % (hi - lo + 1); };
  for (const auto& s : sources) {
    ASSERT_EQ(s.size(), draw(15, 25));
    for (int32_t w : s) ASSERT_EQ(static_cast<uint64_t>(w), draw(4, 7999));
  }
}

TEST(TranslateBenchSort, LongestFirstAndStable) {
  const auto sources = make_decode_sources();
  const std::vector<int64_t> order = length_order(sources);
  ASSERT_EQ(order.size(), sources.size());
  std::vector<int> seen(sources.size(), 0);
  for (int64_t i : order) ++seen[i];
  for (int n : seen) EXPECT_EQ(n, 1);
  EXPECT_EQ(sources[order.front()].size(), 25u);
  EXPECT_EQ(sources[order.back()].size(), 15u);
  for (size_t i = 1; i < order.size(); ++i) {
    const size_t a = sources[order[i - 1]].size(), b = sources[order[i]].size();
    EXPECT_GE(a, b);
    if (a == b) {
      EXPECT_LT(order[i - 1], order[i]);  // ties keep the draw order
    }
  }
  // Ties by hand: lengths 3, 5, 3, 5, 4 -> 1, 3, 4, 0, 2.
  const std::vector<std::vector<int32_t>> tiny = {
      {4, 4, 4}, {4, 4, 4, 4, 4}, {5, 5, 5}, {5, 5, 5, 5, 5}, {6, 6, 6, 6}};
  EXPECT_EQ(length_order(tiny), (std::vector<int64_t>{1, 3, 4, 0, 2}));
}

TEST(TranslateBenchBatch, RowsEndInEosThenPad) {
  const std::vector<std::vector<int32_t>> sources = {{7, 8}, {9, 10, 11, 12}, {13}};
  const std::vector<int64_t> order = length_order(sources);  // 1, 0, 2
  const Tensor src = make_source_batch(sources, order, 0, 3);
  ASSERT_EQ(src.shape(), Shape({3, 5}));
  // Rows: the 4-word source, the 2-word one, the 1-word one; each words, EOS, then PAD.
  const std::vector<int32_t> want = {9,      10,     11, 12,     kEosId, 7,      8,     kEosId,
                                     kPadId, kPadId, 13, kEosId, kPadId, kPadId, kPadId};
  EXPECT_EQ(std::vector<int32_t>(src.i32(), src.i32() + src.numel()), want);
}

TEST(TranslateBenchConstraint, BansThenForcesEos) {
  SearchOptions o;
  force_output_lengths(o, {2, 0}, 6);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> row = {-1, -2, -3, -4, -5, -6};
  o.constrain(0, std::vector<int32_t>(1, 5), row.data());
  EXPECT_EQ(row[kEosId], -inf);
  EXPECT_EQ(row[4], -5);
  row = {-1, -2, -3, -4, -5, -6};
  o.constrain(0, std::vector<int32_t>(2, 5), row.data());
  EXPECT_EQ(row, (std::vector<float>{-inf, -inf, -3, -inf, -inf, -inf}));
  row = {-1, -2, -3, -4, -5, -6};
  o.constrain(1, std::vector<int32_t>{}, row.data());
  EXPECT_EQ(row, (std::vector<float>{-inf, -inf, -3, -inf, -inf, -inf}));
}

class TranslateBenchRun : public ::testing::TestWithParam<bool> {};

TEST_P(TranslateBenchRun, EveryOutputHasItsSourceLength) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 1;
  c.d_model = 16;
  c.d_ff = 32;
  c.heads = 2;
  c.d_k = c.d_v = 8;
  c.vocab_size = 8000;
  Transformer model(c);
  model.init_parameters(3);

  TranslateBenchOptions o;
  o.sentences = 10;
  o.batch_sentences = 4;  // batches of 4, 4, 2: padding and sentences leaving mid-batch
  o.greedy = GetParam();
  const TranslateBenchResult r = run_translate_bench(model, o);

  const auto sources = make_decode_sources(10);
  EXPECT_EQ(r.search, o.greedy ? "greedy" : "beam");
  EXPECT_EQ(r.beam, o.greedy ? 1 : 4);
  EXPECT_EQ(r.batches, 3);
  ASSERT_EQ(r.batch_seconds.size(), 3u);
  ASSERT_EQ(r.output_lengths.size(), 10u);
  int64_t words = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    EXPECT_EQ(r.output_lengths[s], static_cast<int64_t>(sources[s].size())) << "sentence " << s;
    words += static_cast<int64_t>(sources[s].size());
  }
  EXPECT_EQ(r.source_words, words);
  EXPECT_EQ(r.source_tokens, words + 10);
  EXPECT_EQ(r.output_tokens, words + 10);
  EXPECT_GT(r.seconds, 0);
  EXPECT_NEAR(r.tokens_per_second * r.seconds, static_cast<double>(r.output_tokens), 1e-6);
  EXPECT_NEAR(r.sentences_per_second * r.seconds, 10.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(TranslateBench, TranslateBenchRun, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Greedy" : "Beam"; });

}  // namespace
}  // namespace transduce::bench
