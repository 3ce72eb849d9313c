// Scoring given translations (score_pairs) against the training forward pass (its summed
// -log p(label) over the same pairs, one pair at a time) and against beam search's own scores of
// the hypotheses it returns; batching does not change a pair's score; bad input is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/arena.h"
#include "core/error.h"
#include "core/rng.h"
#include "decode/forced_score.h"
#include "decode/search.h"
#include "support/random_model.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

using Tokens = std::vector<int32_t>;

Tokens random_tokens(SplitMix64& rng, int64_t length, int vocab) {
  Tokens t;
  for (int64_t i = 0; i < length; ++i)
    t.push_back(static_cast<int32_t>(rng.randint(4, static_cast<uint64_t>(vocab - 1))));
  return t;
}

// -log p(target + EOS | source + EOS) from Transformer::forward, the training path (no dropout:
// not training), for one pair.
double forward_nll(Transformer& model, const Tokens& source, const Tokens& target) {
  const int64_t ls = static_cast<int64_t>(source.size()) + 1,
                lt = static_cast<int64_t>(target.size()) + 1;
  Batch b{Tensor::empty({1, ls}, DType::I32), Tensor::empty({1, lt}, DType::I32),
          Tensor::empty({1, lt}, DType::I32)};
  std::copy(source.begin(), source.end(), b.src.i32());
  b.src.i32()[ls - 1] = kEosId;
  b.tgt_in.i32()[0] = kBosId;
  std::copy(target.begin(), target.end(), b.tgt_in.i32() + 1);
  std::copy(target.begin(), target.end(), b.tgt_out.i32());
  b.tgt_out.i32()[lt - 1] = kEosId;
  Arena arena;
  Context ctx(arena);
  return model.forward(ctx, b).nll;
}

TEST(ForcedScore, EqualsTheTrainingForwardPass) {
  const ModelConfig c = testing::precision_test_config();
  Transformer model(c);
  testing::init_untrained(model, 3);
  SplitMix64 rng(29);
  std::vector<Tokens> sources, targets;
  for (int i = 0; i < 24; ++i) {
    sources.push_back(random_tokens(rng, static_cast<int64_t>(rng.randint(0, 30)), c.vocab_size));
    targets.push_back(random_tokens(rng, static_cast<int64_t>(rng.randint(0, 30)), c.vocab_size));
  }
  const std::vector<PairScore> got = score_pairs(model, sources, targets, 0.6f, 300);
  ASSERT_EQ(got.size(), sources.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    const double want = -forward_nll(model, sources[i], targets[i]);
    EXPECT_NEAR(got[i].log_prob, want, 1e-5 * std::abs(want) + 1e-5);
    ASSERT_EQ(got[i].token_log_probs.size(), targets[i].size() + 1);
    double sum = 0;
    for (float lp : got[i].token_log_probs) {
      EXPECT_LE(lp, 0.0f);
      sum += lp;
    }
    EXPECT_NEAR(sum, got[i].log_prob, 1e-4);
    const double lp = std::pow((5.0 + static_cast<double>(targets[i].size() + 1)) / 6.0, 0.6);
    EXPECT_NEAR(got[i].score, got[i].log_prob / lp, 1e-5 * std::abs(got[i].log_prob));
  }
  // One batch for all, or a pair a batch: the same scores.
  const std::vector<PairScore> one_by_one = score_pairs(model, sources, targets, 0.6f, 1);
  const std::vector<PairScore> together = score_pairs(model, sources, targets, 0.6f, 100000);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(one_by_one[i].log_prob, got[i].log_prob, 1e-5 * std::abs(got[i].log_prob));
    EXPECT_NEAR(together[i].log_prob, got[i].log_prob, 1e-5 * std::abs(got[i].log_prob));
  }
}

// Every hypothesis of a beam-4 n-best list, scored by force decoding, gets the log-probability
// and the length-normalised score the search gave it (incremental decoding against a full
// pass: fp32 rounding apart).
TEST(ForcedScore, EqualsBeamSearchsOwnScoresOfItsOutputs) {
  const ModelConfig c = testing::precision_test_config();
  Transformer model(c);
  testing::init_untrained(model, 5);
  SplitMix64 rng(31);
  const int64_t sentences = 6, ls = 9;
  Tensor src = Tensor::zeros({sentences, ls}, DType::I32);
  std::vector<Tokens> sources;
  for (int64_t s = 0; s < sentences; ++s) {
    const int64_t length = ls - 1 - s % 3;  // some padded
    sources.push_back(random_tokens(rng, length, c.vocab_size));
    std::copy(sources.back().begin(), sources.back().end(), src.i32() + s * ls);
    src.i32()[s * ls + length] = kEosId;
  }
  SearchOptions o;
  o.beam = 4;
  o.nbest = 4;
  o.alpha = 0.8f;
  o.max_len_a = 0;
  o.max_len_b = 12;
  const auto found = beam_search(model, src, o);
  std::vector<Tokens> pair_sources, pair_targets;
  std::vector<Hypothesis> hyps;
  for (int64_t s = 0; s < sentences; ++s)
    for (const Hypothesis& h : found[s]) {
      pair_sources.push_back(sources[s]);
      pair_targets.push_back(h.tokens);
      hyps.push_back(h);
    }
  ASSERT_GE(hyps.size(), static_cast<size_t>(sentences * 2));
  const std::vector<PairScore> got = score_pairs(model, pair_sources, pair_targets, o.alpha);
  for (size_t i = 0; i < hyps.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_NEAR(got[i].log_prob, hyps[i].log_prob, 1e-5 * std::abs(hyps[i].log_prob) + 1e-5);
    EXPECT_NEAR(got[i].score, hyps[i].score, 1e-5 * std::abs(hyps[i].score) + 1e-5);
  }
}

TEST(ForcedScore, BadInputIsRefused) {
  const ModelConfig c = testing::precision_test_config();
  Transformer model(c);
  testing::init_untrained(model, 7);
  const std::vector<Tokens> one{{5, 6}}, two{{5}, {6}};
  EXPECT_THROW(score_pairs(model, one, two, 0.6f), Error);
  const std::vector<Tokens> too_long{Tokens(static_cast<size_t>(c.max_positions), 5)};
  EXPECT_THROW(score_pairs(model, one, too_long, 0.6f), Error);
  EXPECT_THROW(score_pairs(model, too_long, one, 0.6f), Error);
  EXPECT_THROW(score_pairs(model, one, {{c.vocab_size}}, 0.6f), Error);
  EXPECT_THROW(score_pairs(model, one, one, 0.6f, 0), Error);
  // The longest accepted: max_positions - 1 pieces, EOS taking the last position.
  const std::vector<Tokens> longest{Tokens(static_cast<size_t>(c.max_positions - 1), 5)};
  EXPECT_EQ(score_pairs(model, longest, longest, 0.6f).size(), 1u);
}

}  // namespace
}  // namespace transduce
