// Beam search against exact references. On a small model trained here (Trainer) with a tiny
// vocabulary: an exhaustive search over every output up to a length, scored by full
// (non-incremental) forward passes, and a full-pass rescoring of what beam 4 returns. On the
// committed weights of tests/fixtures/golden_beam.safetensors (a model trained in PyTorch): the
// n-best lists of an independent PyTorch beam search (tests/fixtures/make_beam_golden.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "decode/search.h"
#include "io/model_weights.h"
#include "support/exhaustive_search.h"
#include "text/special_ids.h"
#include "train/trainer.h"

namespace transduce {
namespace {

using testing::close;
using testing::gnmt_lp;
using testing::one_source;
using testing::Output;
using testing::rank;
using testing::Ranked;
using testing::show;
using testing::Tokens;

// The exact references take a list of models: here always one.
std::vector<Output> every_output(Transformer& model, const Tokens& src, int64_t max_len) {
  Transformer* const one[] = {&model};
  return testing::every_output(one, src, max_len);
}
double full_pass_log_prob(Transformer& model, const Tokens& src, const Tokens& tokens) {
  Transformer* const one[] = {&model};
  return testing::full_pass_log_prob(one, src, tokens);
}

// ---------------------------------------------------------------------------------------------
// A trained model. Vocabulary: PAD BOS EOS UNK and the words 4..7. Sources are one or two words;
// each word gives a piece of the target:
//   4 -> "5 6" (35%) or "6 x" with x uniform over 4..7 (65%): greedy search takes 6 first, but
//        no "6 x" (16% each) is as likely as "5 6";
//   5 -> "7";  6 -> "4 4";
//   7 -> "7" (55%) or "5 5 5 5" (45%): the length penalty (alpha 1) favours the longer one.
// ---------------------------------------------------------------------------------------------

constexpr int kVocab = 8;
constexpr int64_t kExhaustiveLength = 4;

Tokens target_piece(int32_t word, SplitMix64& rng) {
  const float u = rng.uniform();
  switch (word) {
    case 4:
      if (u < 0.35f) return {5, 6};
      return {6, static_cast<int32_t>(rng.randint(4, 7))};
    case 5:
      return {7};
    case 6:
      return {4, 4};
    default:
      return u < 0.55f ? Tokens{7} : Tokens{5, 5, 5, 5};
  }
}

std::vector<Example> toy_task(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Example> data;
  for (int i = 0; i < n; ++i) {
    Example e;
    const int64_t len = rng.randint(1, 2);
    for (int64_t t = 0; t < len; ++t) {
      e.src.push_back(static_cast<int32_t>(rng.randint(4, 7)));
      const Tokens piece = target_piece(e.src.back(), rng);
      e.tgt.insert(e.tgt.end(), piece.begin(), piece.end());
    }
    data.push_back(std::move(e));
  }
  return data;
}

class BeamReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ModelConfig c;
    c.layers = 1;
    c.d_model = 32;
    c.d_ff = 64;
    c.heads = 4;
    c.d_k = c.d_v = 8;
    c.dropout = 0.0f;
    c.label_smoothing = 0.0f;
    c.vocab_size = kVocab;
    c.max_positions = 16;
    model_ = std::make_unique<Transformer>(c);
    model_->init_parameters(3);
    const std::vector<Example> train = toy_task(3000, 11);
    TrainOptions o;
    o.batch_tokens = 256;
    o.warmup = 100;
    o.lr_scale = 0.5f;  // peak 0.5 * 32^-0.5 * 100^-0.5 = 0.009
    o.max_steps = 600;
    o.log_every = 100;
    o.valid_every = 0;
    o.save_every_minutes = 0;
    Trainer(*model_, train, nullptr, o).run(nullptr);
    // Then anneal: a second run at a 25 times lower rate on larger batches, so the probabilities
    // settle near the data's instead of moving with the last batches.
    o.batch_tokens = 1024;
    o.warmup = 1;
    o.lr_scale = 0.02f;
    o.max_steps = 200;
    Trainer(*model_, train, nullptr, o).run(nullptr);
    // A second model for the ensemble tests: other weights, other data, only the first run.
    other_ = std::make_unique<Transformer>(c);
    other_->init_parameters(8);
    o.batch_tokens = 256;
    o.warmup = 100;
    o.lr_scale = 0.5f;
    o.max_steps = 400;
    Trainer(*other_, toy_task(3000, 12), nullptr, o).run(nullptr);
  }
  static void TearDownTestSuite() {
    model_.reset();
    other_.reset();
  }

  // Sources as the translator gives them to the search: the words, then EOS.
  static std::vector<Tokens> sources() { return {{4, 2}, {5, 4, 2}, {4, 7, 2}, {7, 2}, {6, 4, 2}}; }
  static constexpr double kAlphas[] = {0.0, 0.6, 1.0};

  static SearchOptions options(int beam, double alpha, int64_t max_len) {
    SearchOptions o;
    o.beam = beam;
    o.nbest = 1;
    o.alpha = static_cast<float>(alpha);
    o.max_len_a = 0.0f;
    o.max_len_b = static_cast<int>(max_len);
    o.min_len_b = 0;  // the references rank the empty output too
    return o;
  }

  static std::unique_ptr<Transformer> model_, other_;
};

std::unique_ptr<Transformer> BeamReference::model_, BeamReference::other_;

TEST_F(BeamReference, TheModelLearnedTheGardenPath) {
  const Tokens src{4, 2};
  const std::vector<Ranked> ranked = rank(every_output(*model_, src, kExhaustiveLength), 0.0);
  EXPECT_EQ(ranked[0].tokens, (Tokens{5, 6}));
  EXPECT_NEAR(std::exp(ranked[0].log_prob), 0.35, 0.1);
  // Each "6 x" has 0.65 / 4 in the data.
  for (int32_t x = 4; x <= 7; ++x) {
    const double p = std::exp(full_pass_log_prob(*model_, src, {6, x}));
    EXPECT_GT(p, 0.08) << "6 " << x;
    EXPECT_LT(p, 0.25) << "6 " << x;
  }
  const Hypothesis greedy = greedy_search(*model_, one_source(src), options(1, 0.0, 4))[0];
  ASSERT_FALSE(greedy.tokens.empty());
  EXPECT_EQ(greedy.tokens[0], 6) << show(greedy.tokens);
}

// With `words` = V - 3 tokens that are not EOS, a step with n live hypotheses has n * (words + 1)
// candidates, and the beam keeps beam - (finished so far) of them. Taking all of them at every step
// up to length L needs beam >= 1 + words + ... + words^L: then every output up to L finishes.
TEST_F(BeamReference, AWideEnoughBeamFindsTheExhaustiveBest) {
  const int64_t words = kVocab - 3;
  int64_t beam = 0;
  for (int64_t t = 0, n = 1; t <= kExhaustiveLength; ++t, n *= words) beam += n;
  ASSERT_EQ(beam, 781);
  int greedy_misses = 0, clear_winners = 0;
  for (const Tokens& src : sources()) {
    const std::vector<Output> outputs = every_output(*model_, src, kExhaustiveLength);
    ASSERT_EQ(outputs.size(), static_cast<size_t>(beam));
    for (const double alpha : kAlphas) {
      SCOPED_TRACE(fmt::format("source {} alpha {}", show(src), alpha));
      const std::vector<Ranked> best = rank(outputs, alpha);
      // Unless the first two are too close for float32, the winner itself must be found.
      const bool clear = best[0].score - best[1].score > 1e-4;
      clear_winners += clear;
      SearchOptions o = options(static_cast<int>(beam), alpha, kExhaustiveLength);
      std::map<Tokens, const Ranked*> exact;
      for (const Ranked& r : best) exact[r.tokens] = &r;
      // nbest changes when the search may stop: after the first or the fifth finished output, or
      // (nbest = beam) only when every output has finished.
      for (const int nbest : {1, 5, static_cast<int>(beam)}) {
        o.nbest = nbest;
        const std::vector<Hypothesis> found = beam_search(*model_, one_source(src), o)[0];
        ASSERT_EQ(found.size(), static_cast<size_t>(nbest));
        if (clear) {
          EXPECT_EQ(found[0].tokens, best[0].tokens)
              << "nbest " << nbest << ": " << show(found[0].tokens) << " instead of "
              << show(best[0].tokens);
        }
        std::set<Tokens> seen;
        for (int r = 0; r < nbest; ++r) {
          SCOPED_TRACE(fmt::format("nbest {} rank {}: {}", nbest, r, show(found[r].tokens)));
          // The r-th best score (near ties may come in either order) ...
          EXPECT_TRUE(close(found[r].score, best[r].score, 1e-5))
              << found[r].score << " vs " << best[r].score;
          // ... is the exact score of the tokens it came with, which no other rank has.
          const auto same = exact.find(found[r].tokens);
          ASSERT_NE(same, exact.end());
          EXPECT_TRUE(close(found[r].log_prob, same->second->log_prob, 1e-5))
              << found[r].log_prob << " vs " << same->second->log_prob;
          EXPECT_TRUE(close(found[r].score, same->second->score, 1e-5));
          EXPECT_TRUE(seen.insert(found[r].tokens).second) << "twice";
        }
      }
      const Hypothesis greedy = greedy_search(*model_, one_source(src), o)[0];
      if (greedy.tokens != best[0].tokens) {
        ++greedy_misses;
        EXPECT_LT(greedy.score, best[0].score - 1e-3);
      }
    }
  }
  // The search problem is not trivial: greedy search misses the best output somewhere.
  EXPECT_GT(greedy_misses, 0);
  EXPECT_GE(clear_winners, 12) << "of 15 cases";
}

TEST_F(BeamReference, BeamFourScoresAreThoseOfAFullForwardPass) {
  int beats_greedy = 0;
  for (const Tokens& src : sources()) {
    const std::vector<Output> outputs = every_output(*model_, src, kExhaustiveLength);
    for (const double alpha : kAlphas) {
      SCOPED_TRACE(fmt::format("source {} alpha {}", show(src), alpha));
      // Exhaustive search's length first, then a longer limit that it could not cover.
      for (const int64_t max_len : {kExhaustiveLength, int64_t{9}}) {
        SearchOptions o = options(4, alpha, max_len);
        o.nbest = 4;
        const std::vector<Hypothesis> found = beam_search(*model_, one_source(src), o)[0];
        ASSERT_EQ(found.size(), 4u);
        for (size_t r = 0; r < found.size(); ++r) {
          const Hypothesis& h = found[r];
          EXPECT_LE(static_cast<int64_t>(h.tokens.size()), max_len);
          for (const int32_t t : h.tokens) EXPECT_TRUE(t >= 3 && t < kVocab) << show(h.tokens);
          const double log_prob = full_pass_log_prob(*model_, src, h.tokens);
          const double score = log_prob / gnmt_lp(static_cast<int64_t>(h.tokens.size()) + 1, alpha);
          EXPECT_TRUE(close(h.log_prob, log_prob, 1e-5))
              << show(h.tokens) << ": " << h.log_prob << " vs " << log_prob;
          EXPECT_TRUE(close(h.score, score, 1e-5))
              << show(h.tokens) << ": " << h.score << " vs " << score;
          if (r > 0) {
            EXPECT_GE(found[r - 1].score, h.score);
          }
          for (size_t q = 0; q < r; ++q) EXPECT_NE(found[q].tokens, h.tokens);
        }
        if (max_len != kExhaustiveLength) continue;
        const std::vector<Ranked> best = rank(outputs, alpha);
        const Hypothesis greedy = greedy_search(*model_, one_source(src), o)[0];
        if (found[0].tokens == best[0].tokens && greedy.tokens != best[0].tokens) ++beats_greedy;
      }
    }
  }
  EXPECT_GT(beats_greedy, 0) << "beam 4 never found a better output than greedy search";
}

// ---------------------------------------------------------------------------------------------
// Ensembles: the same references with each step's distribution the mean of two models'.
// ---------------------------------------------------------------------------------------------

// Both rules: the mean of the probabilities and the mean of the log-probabilities.
constexpr EnsembleMean kRules[] = {EnsembleMean::kProbabilities, EnsembleMean::kLogProbabilities};

TEST_F(BeamReference, AnEnsemblesWideBeamFindsItsExhaustiveBest) {
  Transformer* const pair[] = {model_.get(), other_.get()};
  const int64_t beam = 781;  // every output up to kExhaustiveLength (see above)
  for (const EnsembleMean rule : kRules) {
    SCOPED_TRACE(rule == EnsembleMean::kProbabilities ? "mean of probabilities" : "mean of logs");
    int clear_winners = 0;
    double largest_gap = 0;
    for (const Tokens& src : sources()) {
      const std::vector<Output> outputs = testing::every_output(pair, src, kExhaustiveLength, rule);
      const std::vector<Output> alone = every_output(*model_, src, kExhaustiveLength);
      ASSERT_EQ(outputs.size(), alone.size());
      for (size_t i = 0; i < outputs.size(); ++i)
        largest_gap = std::max(largest_gap, std::abs(outputs[i].log_prob - alone[i].log_prob));
      for (const double alpha : kAlphas) {
        SCOPED_TRACE(fmt::format("source {} alpha {}", show(src), alpha));
        const std::vector<Ranked> best = rank(outputs, alpha);
        const bool clear = best[0].score - best[1].score > 1e-4;
        clear_winners += clear;
        SearchOptions o = options(static_cast<int>(beam), alpha, kExhaustiveLength);
        o.nbest = 5;
        o.ensemble = rule;
        const std::vector<Hypothesis> found = beam_search(pair, one_source(src), o)[0];
        ASSERT_EQ(found.size(), 5u);
        if (clear) {
          EXPECT_EQ(found[0].tokens, best[0].tokens) << show(found[0].tokens);
        }
        for (size_t r = 0; r < found.size(); ++r) {
          SCOPED_TRACE(fmt::format("rank {}: {}", r, show(found[r].tokens)));
          EXPECT_TRUE(close(found[r].score, best[r].score, 1e-5))
              << found[r].score << " vs " << best[r].score;
          const auto same = std::find_if(best.begin(), best.end(), [&](const Ranked& x) {
            return x.tokens == found[r].tokens;
          });
          ASSERT_NE(same, best.end());
          EXPECT_TRUE(close(found[r].log_prob, same->log_prob, 1e-5))
              << found[r].log_prob << " vs " << same->log_prob;
        }
      }
    }
    // The second model matters: the ensemble's probabilities are not the first model's.
    EXPECT_GT(largest_gap, 0.05);
    EXPECT_GE(clear_winners, 12) << "of 15 cases";
  }
}

// A batch of sources of different lengths (padding, sentences ending at different steps, so both
// members' caches shrink and reorder together): beam 4's n-best and greedy search's output carry
// the ensemble's full-pass log-probabilities, and greedy takes the ensemble's best token each step.
// With the mean of the log-probabilities, a hypothesis's log_prob is the mean of the models'.
TEST_F(BeamReference, AnEnsemblesBatchedSearchScoresAreItsFullPassScores) {
  Transformer* const pair[] = {model_.get(), other_.get()};
  const std::vector<Tokens> srcs = sources();
  size_t width = 0;
  for (const Tokens& s : srcs) width = std::max(width, s.size());
  Tensor batch =
      Tensor::zeros({static_cast<int64_t>(srcs.size()), static_cast<int64_t>(width)}, DType::I32);
  for (size_t b = 0; b < srcs.size(); ++b)
    std::copy(srcs[b].begin(), srcs[b].end(), batch.i32() + b * width);
  for (const EnsembleMean rule : kRules)
    for (const double alpha : kAlphas) {
      SCOPED_TRACE(rule == EnsembleMean::kProbabilities ? "mean of probabilities" : "mean of logs");
      SearchOptions o = options(4, alpha, 9);
      o.nbest = 4;
      o.ensemble = rule;
      const auto found = beam_search(pair, batch, o);
      const std::vector<Hypothesis> greedy = greedy_search(pair, batch, o);
      ASSERT_EQ(found.size(), srcs.size());
      ASSERT_EQ(greedy.size(), srcs.size());
      for (size_t b = 0; b < srcs.size(); ++b) {
        SCOPED_TRACE(fmt::format("source {} alpha {}", show(srcs[b]), alpha));
        ASSERT_EQ(found[b].size(), 4u);
        // The batch gives what the sentence alone gives.
        const auto alone = beam_search(pair, one_source(srcs[b]), o)[0];
        for (size_t r = 0; r < 4; ++r) {
          const Hypothesis& h = found[b][r];
          EXPECT_EQ(h.tokens, alone[r].tokens) << r;
          const double log_prob = testing::full_pass_log_prob(pair, srcs[b], h.tokens, rule);
          EXPECT_TRUE(close(h.log_prob, log_prob, 1e-5))
              << show(h.tokens) << ": " << h.log_prob << " vs " << log_prob;
        }
        if (rule == EnsembleMean::kLogProbabilities) {
          const Tokens& t = found[b][0].tokens;
          const double each =
              (full_pass_log_prob(*model_, srcs[b], t) + full_pass_log_prob(*other_, srcs[b], t)) /
              2;
          EXPECT_TRUE(close(found[b][0].log_prob, each, 1e-5));
        }
        const Hypothesis& g = greedy[b];
        EXPECT_TRUE(
            close(g.log_prob, testing::full_pass_log_prob(pair, srcs[b], g.tokens, rule), 1e-5));
        // Each greedy token (and the final EOS) is the argmax of the ensemble's distribution after
        // the tokens before it, PAD and BOS excluded.
        Tokens tgt_in{kBosId};
        tgt_in.insert(tgt_in.end(), g.tokens.begin(), g.tokens.end());
        const std::vector<double> logp =
            testing::teacher_forced_log_probs(pair, srcs[b], {tgt_in}, rule);
        for (size_t t = 0; t < tgt_in.size(); ++t) {
          const double* row = logp.data() + t * kVocab;
          const int32_t want = static_cast<int32_t>(std::max_element(row + 2, row + kVocab) - row);
          EXPECT_EQ(t < g.tokens.size() ? g.tokens[t] : kEosId, want) << "step " << t;
        }
      }
    }
}

// A model with itself is the model: the mean of equal probabilities changes nothing.
TEST_F(BeamReference, AModelEnsembledWithItselfTranslatesAsItDoesAlone) {
  Transformer* const twice[] = {model_.get(), model_.get()};
  for (const EnsembleMean rule : kRules)
    for (const Tokens& src : sources()) {
      SearchOptions o = options(4, 0.6, 9);
      o.nbest = 3;
      o.ensemble = rule;
      const auto pair = beam_search(twice, one_source(src), o)[0];
      const auto alone = beam_search(*model_, one_source(src), o)[0];
      ASSERT_EQ(pair.size(), alone.size());
      for (size_t r = 0; r < pair.size(); ++r) {
        EXPECT_EQ(pair[r].tokens, alone[r].tokens) << show(src) << " rank " << r;
        EXPECT_NEAR(pair[r].log_prob, alone[r].log_prob, 1e-5);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// The independent PyTorch search.
// ---------------------------------------------------------------------------------------------

// The committed PyTorch-trained model of tests/fixtures/golden_beam.json and its sources.
struct Golden {
  nlohmann::json fixture;
  std::unique_ptr<Transformer> model;
  std::vector<Tokens> sources;
};

Golden load_golden() {
  const std::string dir = TRANSDUCE_FIXTURES_DIR;
  std::ifstream in(dir + "/golden_beam.json");
  if (!in) throw std::runtime_error("cannot read " + dir + "/golden_beam.json");
  Golden g;
  g.fixture = nlohmann::json::parse(in);
  const std::string path = dir + "/" + g.fixture.at("weights").get<std::string>();
  const io::SafetensorsFile file = io::load_safetensors(path);
  g.model = std::make_unique<Transformer>(io::config_from_metadata(file, path));
  io::load_weights(*g.model, file, path);
  g.sources = g.fixture.at("sources").get<std::vector<Tokens>>();
  return g;
}

// The fixture's length limits and minimum length.
SearchOptions golden_options(const nlohmann::json& fixture) {
  SearchOptions o;
  o.max_len_a = fixture.at("max_len_a").get<float>();
  o.max_len_b = fixture.at("max_len_b").get<int>();
  o.min_len_b = fixture.at("min_len_b").get<int>();
  return o;
}

// Keeping the beam k wide never finds a worse best output than letting it narrow as hypotheses
// end (the rule before), and on this model a better one somewhere.
TEST(BeamReferenceGolden, AKWideBeamIsNeverWorseThanANarrowingOne) {
  const Golden g = load_golden();
  Transformer* const one[] = {g.model.get()};
  int better = 0, cases = 0;
  for (const Tokens& src : g.sources) {
    SearchOptions o = golden_options(g.fixture);
    o.min_len_b = 0;
    const int64_t max_len = output_limit(g.model->config(), static_cast<int64_t>(src.size()), o);
    for (const float alpha : {0.0f, 0.6f, 1.0f}) {
      for (const int k : {1, 2, 3, 4}) {
        o.alpha = alpha;
        o.beam = k;
        const Ranked narrow = testing::narrowing_beam(one, src, k, alpha, max_len);
        const Hypothesis wide = beam_search(*g.model, one_source(src), o)[0][0];
        SCOPED_TRACE(fmt::format("{} alpha {} k {}", show(src), alpha, k));
        EXPECT_GE(wide.score, narrow.score - 1e-5)
            << show(wide.tokens) << " below " << show(narrow.tokens);
        better += wide.score > narrow.score + 1e-5;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 72);
  EXPECT_GT(better, 0);  // 7 of the 72 when written
}

TEST(BeamReferenceGolden, NBestListsAndScoresMatchPyTorch) {
  const Golden g = load_golden();
  const nlohmann::json& fixture = g.fixture;
  Transformer& model = *g.model;
  const std::vector<Tokens>& sources = g.sources;
  ASSERT_GE(sources.size(), 4u);
  size_t width = 0;
  for (const Tokens& s : sources) width = std::max(width, s.size());
  Tensor src = Tensor::zeros({static_cast<int64_t>(sources.size()), static_cast<int64_t>(width)},
                             DType::I32);
  for (size_t b = 0; b < sources.size(); ++b)
    std::copy(sources[b].begin(), sources[b].end(), src.i32() + b * width);

  const auto close_enough = [](double got, double want) { return close(got, want, 1e-4); };
  int cases = 0;
  std::map<std::pair<int, float>, std::vector<Tokens>> best_of;  // (beam, alpha) -> best outputs
  for (const nlohmann::json& c : fixture.at("cases")) {
    SearchOptions o = golden_options(fixture);
    o.beam = c.at("beam").get<int>();
    o.nbest = c.at("nbest").get<int>();
    o.alpha = c.at("alpha").get<float>();
    SCOPED_TRACE(fmt::format("beam {} nbest {} alpha {}", o.beam, o.nbest, o.alpha));
    const std::vector<std::vector<Hypothesis>> found = beam_search(model, src, o);
    const nlohmann::json& results = c.at("results");
    ASSERT_EQ(results.size(), sources.size());
    std::vector<Tokens>& best = best_of[{o.beam, o.alpha}];
    best.clear();
    for (const auto& hyps : found) best.push_back(hyps.empty() ? Tokens{} : hyps[0].tokens);
    for (size_t s = 0; s < sources.size(); ++s) {
      const nlohmann::json& want = results[s];
      ASSERT_EQ(found[s].size(), want.size()) << "source " << s;
      for (size_t r = 0; r < want.size(); ++r) {
        const Tokens tokens = want[r].at("tokens").get<Tokens>();
        const double log_prob = want[r].at("log_prob").get<double>();
        const double score = want[r].at("score").get<double>();
        const Hypothesis& h = found[s][r];
        EXPECT_EQ(h.tokens, tokens) << "source " << s << " rank " << r;
        EXPECT_TRUE(close_enough(h.log_prob, log_prob))
            << "source " << s << " rank " << r << ": " << h.log_prob << " vs " << log_prob;
        EXPECT_TRUE(close_enough(h.score, score))
            << "source " << s << " rank " << r << ": " << h.score << " vs " << score;
      }
    }
    ++cases;
  }
  // Beams 1, 2 and 4, each with nbest 1 and nbest = beam, at alpha 0, 0.6 and 1.
  EXPECT_EQ(cases, 15);
  for (const nlohmann::json& c : fixture.at("greedy")) {
    SearchOptions o = golden_options(fixture);
    o.alpha = c.at("alpha").get<float>();
    const std::vector<Hypothesis> greedy = greedy_search(model, src, o);
    best_of[{1, o.alpha}].clear();
    for (size_t s = 0; s < sources.size(); ++s) {
      const nlohmann::json& want = c.at("results").at(s).at(0);
      EXPECT_EQ(greedy[s].tokens, want.at("tokens").get<Tokens>()) << "greedy, source " << s;
      EXPECT_TRUE(close_enough(greedy[s].score, want.at("score").get<double>()))
          << "greedy, source " << s;
      best_of[{1, o.alpha}].push_back(greedy[s].tokens);
    }
  }
  // The fixture is no easy case: beam 4 finds outputs greedy search does not (best_of's beam 1
  // entries are greedy search's).
  int beam_wins = 0;
  for (const float alpha : {0.0f, 0.6f, 1.0f}) {
    ASSERT_TRUE(best_of.count({1, alpha}) && best_of.count({4, alpha}));
    for (size_t s = 0; s < sources.size(); ++s)
      beam_wins += best_of[{1, alpha}][s] != best_of[{4, alpha}][s];
  }
  EXPECT_GT(beam_wins, 0);
}

}  // namespace
}  // namespace transduce
