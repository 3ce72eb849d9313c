// The decoding controls (decode/search.h) against references that recompute everything with full,
// non-incremental decoder passes in double: target prefixes, n-gram blocking, the repetition
// penalty, alternatives at a position, per-token scores, and sampling's distribution (a chi-square
// test) and reproducibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/arena.h"
#include "core/rng.h"
#include "core/threads.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "model/context.h"
#include "support/exhaustive_search.h"
#include "support/random_model.h"
#include "support/thread_count.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

using testing::Tokens;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Options that make every output exactly `length` tokens long.
SearchOptions exact_length(int length) {
  SearchOptions o;
  o.max_len_a = 0.0f;
  o.max_len_b = length;
  o.min_len_b = length;
  return o;
}

// A random model whose distributions are peaked as a trained model's are: its shared embedding
// (and so its logits) scaled up.
void sharpen(Transformer& model, float factor) {
  Tensor& w = model.embedding.weight.value;
  for (int64_t i = 0; i < w.numel(); ++i) w.f32()[i] *= factor;
}

// The decoder's logits after BOS + tokens for one source, by a full pass, in double.
std::vector<double> full_logits(Transformer& model, const Tokens& src, const Tokens& tokens) {
  Arena arena;
  Context ctx(arena);
  const Tensor s = testing::one_source(src);
  Tokens in{kBosId};
  in.insert(in.end(), tokens.begin(), tokens.end());
  const Tensor t = testing::one_source(in);
  const Tensor pad = model.padding_mask(ctx, s);
  const Tensor logits =
      model.decode(ctx, t, model.padding_mask(ctx, t), model.encode(ctx, s, pad), pad);
  const int64_t vocab = model.config().vocab_size, last = static_cast<int64_t>(tokens.size());
  return std::vector<double>(logits.f32() + last * vocab, logits.f32() + (last + 1) * vocab);
}

std::vector<double> log_softmax(std::vector<double> x) {
  const double top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - top);
  for (double& v : x) v = v - top - std::log(sum);
  return x;
}

// The search's rules, written out again: PAD and BOS banned, no repeated n-gram, EOS banned below
// min_len, only EOS at max_len.
void ban(std::vector<double>& row, const Tokens& tokens, int64_t min_len, int64_t max_len,
         int no_repeat = 0) {
  const int64_t step = static_cast<int64_t>(tokens.size());
  row[kPadId] = row[kBosId] = -kInf;
  if (no_repeat > 0)
    for (int64_t i = 0; i + no_repeat <= step; ++i)
      if (std::equal(tokens.end() - (no_repeat - 1), tokens.end(), tokens.begin() + i))
        row[tokens[i + no_repeat - 1]] = -kInf;
  if (step < min_len) row[kEosId] = -kInf;
  if (step >= max_len) {
    const double eos = row[kEosId];
    std::fill(row.begin(), row.end(), -kInf);
    row[kEosId] = eos;
  }
}

// Greedy search by full passes: the prefix forced, then the most probable allowed token, with
// CTRL's penalty on the logits when `penalty` is not 1.
testing::Ranked reference_greedy(Transformer& model, const Tokens& src, const Tokens& prefix,
                                 int64_t min_len, int64_t max_len, double penalty = 1.0) {
  Tokens tokens;
  double sum = 0;
  while (true) {
    std::vector<double> logits = full_logits(model, src, tokens);
    std::set<int32_t> seen(tokens.begin(), tokens.end());
    for (int32_t t : seen) logits[t] = logits[t] > 0 ? logits[t] / penalty : logits[t] * penalty;
    std::vector<double> row = log_softmax(logits);
    int32_t pick;
    if (tokens.size() < prefix.size()) {
      pick = prefix[tokens.size()];
    } else {
      ban(row, tokens, min_len, max_len);
      pick = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    }
    sum += row[pick];
    if (pick == kEosId) break;
    tokens.push_back(pick);
  }
  return {tokens, sum, sum / testing::gnmt_lp(static_cast<int64_t>(tokens.size()) + 1, 0.6)};
}

Tensor batch_of(const std::vector<Tokens>& sources) {
  size_t width = 0;
  for (const Tokens& s : sources) width = std::max(width, s.size());
  Tensor t = Tensor::zeros({static_cast<int64_t>(sources.size()), static_cast<int64_t>(width)},
                           DType::I32);
  for (size_t b = 0; b < sources.size(); ++b)
    std::copy(sources[b].begin(), sources[b].end(), t.i32() + b * width);
  return t;
}

const std::vector<Tokens> kSources = {{5, 9, 13, 7, 2}, {8, 11, 2}, {4, 6, 6, 10, 12, 15, 2}};

// Batched, with prefixes of other lengths (none among them), each output is the prefix forced
// and greedy search from there, scores to 1e-5 of the full passes'; and beam search returns the
// prefix too, each token's score that of the full pass.
TEST(DecodingControls, APrefixRunIsForcedDecodingThenSearch) {
  for (const uint64_t seed : {1, 2}) {
    Transformer model(testing::small_random_config(23));
    testing::init_untrained(model, seed);
    const std::vector<SentenceControls> controls = {{{7, 9}, 0}, {{}, 1}, {{4, 4, 12}, 2}};
    SearchOptions o;
    o.max_len_a = 0.0f;
    o.max_len_b = 8;
    const auto greedy = greedy_search(model, batch_of(kSources), o, nullptr, controls);
    for (size_t s = 0; s < kSources.size(); ++s) {
      SCOPED_TRACE(fmt::format("seed {} sentence {}", seed, s));
      const testing::Ranked want = reference_greedy(model, kSources[s], controls[s].prefix, 1, 8);
      EXPECT_EQ(greedy[s].tokens, want.tokens);
      EXPECT_TRUE(testing::close(greedy[s].log_prob, want.log_prob, 1e-5))
          << greedy[s].log_prob << " vs " << want.log_prob;
    }
    o.nbest = 4;
    const auto beam = beam_search(model, batch_of(kSources), o, nullptr, controls);
    for (size_t s = 0; s < kSources.size(); ++s) {
      ASSERT_EQ(beam[s].size(), 4u);
      for (const Hypothesis& h : beam[s]) {
        ASSERT_GE(h.tokens.size(), controls[s].prefix.size());
        EXPECT_TRUE(
            std::equal(controls[s].prefix.begin(), controls[s].prefix.end(), h.tokens.begin()));
        ASSERT_EQ(h.token_log_probs.size(), h.tokens.size() + 1);
        double sum = 0;
        Tokens so_far;
        for (size_t i = 0; i <= h.tokens.size(); ++i) {
          const std::vector<double> row = log_softmax(full_logits(model, kSources[s], so_far));
          const int32_t t = i < h.tokens.size() ? h.tokens[i] : kEosId;
          EXPECT_TRUE(testing::close(h.token_log_probs[i], row[t], 1e-5))
              << "token " << i << ": " << h.token_log_probs[i] << " vs " << row[t];
          sum += h.token_log_probs[i];
          so_far.push_back(t);
        }
        EXPECT_TRUE(testing::close(h.log_prob, sum, 1e-5));
      }
    }
  }
}

// Outputs of every length up to 4 over the words 3..7 of a vocabulary of 8 (781 of them).
constexpr int kSmallVocab = 8;
constexpr int64_t kLength = 4;
constexpr int kEveryOutput = 781;

bool repeats_an_ngram(const Tokens& t, int n) {
  std::set<Tokens> seen;
  for (size_t i = 0; i + n <= t.size(); ++i)
    if (!seen.insert(Tokens(t.begin() + i, t.begin() + i + n)).second) return true;
  return false;
}

SearchOptions exhaustive_options(int beam, double alpha) {
  SearchOptions o;
  o.beam = beam;
  o.alpha = static_cast<float>(alpha);
  o.max_len_a = 0.0f;
  o.max_len_b = static_cast<int>(kLength);
  o.min_len_b = 0;
  return o;
}

// A beam as wide as the outputs finds the exhaustive best among those the rules allow: with a
// prefix, those that start with it; with n-gram blocking, those without a repeated n-gram.
TEST(DecodingControls, AWideBeamFindsTheBestAllowedOutput) {
  int cases = 0, blocked_winners = 0;
  for (const uint64_t seed : {3, 4, 5}) {
    Transformer model(testing::small_random_config(kSmallVocab));
    testing::init_untrained(model, seed);
    sharpen(model, 3.0f);
    Transformer* const one[] = {&model};
    for (const Tokens& src : {Tokens{5, 6, 2}, Tokens{7, 3, 4, 2}}) {
      const std::vector<testing::Output> outputs = testing::every_output(one, src, kLength);
      ASSERT_EQ(outputs.size(), static_cast<size_t>(kEveryOutput));
      for (const double alpha : {0.0, 1.0}) {
        const std::vector<testing::Ranked> ranked = testing::rank(outputs, alpha);
        SearchOptions o = exhaustive_options(kEveryOutput, alpha);
        for (const int n : {1, 2}) {
          o.no_repeat_ngram = n;
          auto allowed = ranked.begin();
          while (repeats_an_ngram(allowed->tokens, n)) ++allowed;
          blocked_winners += allowed != ranked.begin();
          const Hypothesis h = beam_search(model, testing::one_source(src), o)[0][0];
          SCOPED_TRACE(fmt::format("seed {} alpha {} n {}", seed, alpha, n));
          EXPECT_EQ(h.tokens, allowed->tokens) << testing::show(h.tokens);
          EXPECT_TRUE(testing::close(h.score, allowed->score, 1e-5));
          ++cases;
        }
        o.no_repeat_ngram = 0;
        const Tokens prefix{6, 6};
        const std::vector<SentenceControls> controls = {{prefix, 0}};
        auto with = std::find_if(ranked.begin(), ranked.end(), [&](const testing::Ranked& r) {
          return r.tokens.size() >= 2 && std::equal(prefix.begin(), prefix.end(), r.tokens.begin());
        });
        const Hypothesis h =
            beam_search(model, testing::one_source(src), o, nullptr, controls)[0][0];
        EXPECT_EQ(h.tokens, with->tokens) << "prefix, " << testing::show(h.tokens);
        EXPECT_TRUE(testing::close(h.score, with->score, 1e-5));
      }
    }
  }
  EXPECT_EQ(cases, 24);
  EXPECT_GT(blocked_winners, 0) << "the unblocked best never repeats an n-gram: no test";
}

bool holds(const Tokens& t, const Tokens& phrase) {
  return std::search(t.begin(), t.end(), phrase.begin(), phrase.end()) != t.end();
}

// A beam as wide as the outputs finds the exhaustive best among the outputs that hold every
// constraint (as contiguous tokens anywhere), and a beam of 2 still holds them all.
TEST(DecodingControls, ConstrainedSearchFindsTheBestOutputHoldingTheConstraints) {
  int cases = 0, moved = 0;
  for (const uint64_t seed : {3, 4}) {
    Transformer model(testing::small_random_config(kSmallVocab));
    testing::init_untrained(model, seed);
    sharpen(model, 3.0f);
    Transformer* const one[] = {&model};
    for (const Tokens& src : {Tokens{5, 6, 2}, Tokens{7, 3, 4, 2}}) {
      const std::vector<testing::Output> outputs = testing::every_output(one, src, kLength);
      for (const std::vector<Tokens>& phrases :
           {std::vector<Tokens>{{6}}, std::vector<Tokens>{{4, 7}}, std::vector<Tokens>{{5}, {3, 3}},
            std::vector<Tokens>{{7, 5}, {5, 7}}}) {
        const std::vector<SentenceControls> controls = {{{}, 0, phrases}};
        for (const double alpha : {0.0, 1.0}) {
          const std::vector<testing::Ranked> ranked = testing::rank(outputs, alpha);
          auto best = std::find_if(ranked.begin(), ranked.end(), [&](const testing::Ranked& r) {
            return std::all_of(phrases.begin(), phrases.end(),
                               [&](const Tokens& p) { return holds(r.tokens, p); });
          });
          ASSERT_NE(best, ranked.end());
          moved += best != ranked.begin();
          SCOPED_TRACE(fmt::format("seed {} {} alpha {} constraint {}", seed, testing::show(src),
                                   alpha, testing::show(phrases[0])));
          const Hypothesis h =
              beam_search(model, testing::one_source(src), exhaustive_options(kEveryOutput, alpha),
                          nullptr, controls)[0][0];
          EXPECT_EQ(h.tokens, best->tokens) << testing::show(h.tokens);
          EXPECT_TRUE(testing::close(h.score, best->score, 1e-5));
          for (const int beam : {1, 2, 4}) {
            SearchOptions o = exhaustive_options(beam, alpha);
            o.nbest = beam;
            const auto narrow =
                beam_search(model, testing::one_source(src), o, nullptr, controls)[0];
            ASSERT_FALSE(narrow.empty()) << "beam " << beam;
            for (const Hypothesis& n : narrow)
              for (const Tokens& p : phrases)
                EXPECT_TRUE(holds(n.tokens, p))
                    << "beam " << beam << ": " << testing::show(n.tokens);
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 32);
  EXPECT_GT(moved, 0) << "the unconstrained best always held the constraints: no test";
}

// In a batch at a real vocabulary size, constrained sentences hold their phrases, one without
// constraints is searched as it would be alone, and one whose phrases cannot fit the length
// limit gets no hypothesis.
TEST(DecodingControls, ConstraintsInABatch) {
  Transformer model(testing::small_random_config(512));
  testing::init_untrained(model, 15);
  SearchOptions o;
  o.max_len_a = 0.0f;
  o.max_len_b = 10;
  o.nbest = 4;
  const std::vector<SentenceControls> controls = {
      {{}, 0, {{300, 301, 302}, {17}}},
      {{}, 1, {}},
      {{}, 2, {{40, 41, 42, 43, 44, 45}, {9, 9, 9, 9, 9}}}};
  const auto found = beam_search(model, batch_of(kSources), o, nullptr, controls);
  ASSERT_EQ(found[0].size(), 4u);
  for (const Hypothesis& h : found[0]) {
    EXPECT_TRUE(holds(h.tokens, {300, 301, 302})) << testing::show(h.tokens);
    EXPECT_TRUE(holds(h.tokens, {17})) << testing::show(h.tokens);
  }
  const auto alone = beam_search(model, batch_of({kSources[1]}), o);
  ASSERT_EQ(found[1].size(), alone[0].size());
  for (size_t i = 0; i < alone[0].size(); ++i) EXPECT_EQ(found[1][i].tokens, alone[0][i].tokens);
  EXPECT_TRUE(found[2].empty()) << "11 constraint tokens within 10";
}

// Greedy search with CTRL's penalty equals the reference's, which penalises the full pass's logits.
TEST(DecodingControls, TheRepetitionPenaltyActsOnTheLogits) {
  Transformer model(testing::small_random_config(23));
  testing::init_untrained(model, 10);
  SearchOptions o = exact_length(12);  // long outputs, so that tokens repeat
  o.repetition_penalty = 1.7f;
  const auto found = greedy_search(model, batch_of(kSources), o);
  int repeats_without = 0;
  for (size_t s = 0; s < kSources.size(); ++s) {
    const testing::Ranked want = reference_greedy(model, kSources[s], {}, 12, 12, 1.7);
    EXPECT_EQ(found[s].tokens, want.tokens) << "sentence " << s;
    EXPECT_TRUE(testing::close(found[s].log_prob, want.log_prob, 1e-5));
    const testing::Ranked plain = reference_greedy(model, kSources[s], {}, 12, 12);
    repeats_without += plain.tokens != want.tokens;
  }
  EXPECT_GT(repeats_without, 0) << "the penalty changed nothing: no test";
}

// No output repeats an n-gram, whatever the search, on long outputs of a real vocabulary size.
TEST(DecodingControls, NoOutputRepeatsABlockedNgram) {
  Transformer model(testing::small_random_config(512));
  testing::init_untrained(model, 11);
  const SearchOptions o = exact_length(40);
  int repeated_without = 0;
  for (const int n : {1, 2, 3}) {
    for (const char* how : {"greedy", "beam", "sampling"}) {
      SearchOptions x = o;
      x.beam = std::string(how) == "beam" ? 4 : 1;
      if (std::string(how) == "sampling") {
        x.sampling.kind = Sampling::Kind::kTopK;
        x.sampling.k = 3;
        x.nbest = 3;
      }
      x.no_repeat_ngram = n;
      Transformer* const one[] = {&model};
      for (const auto& hyps : search(one, batch_of(kSources), x))
        for (const Hypothesis& h : hyps) {
          EXPECT_EQ(h.tokens.size(), 40u);
          EXPECT_FALSE(repeats_an_ngram(h.tokens, n)) << how << " n " << n;
        }
      x.no_repeat_ngram = 0;
      for (const auto& hyps : search(one, batch_of(kSources), x))
        for (const Hypothesis& h : hyps) repeated_without += repeats_an_ngram(h.tokens, n);
    }
  }
  EXPECT_GT(repeated_without, 0);
}

// Alternatives are the k most probable tokens after the prefix, in order, each completed as
// greedy search from the prefix and that token completes it.
TEST(DecodingControls, AlternativesAreTheTopKOfTheStepEachCompletedGreedily) {
  Transformer model(testing::small_random_config(23));
  testing::init_untrained(model, 12);
  const std::vector<SentenceControls> controls = {{{7}, 0}, {{}, 1}, {{4, 4}, 2}};
  SearchOptions o;
  o.alternatives = 5;
  o.max_len_a = 0.0f;
  o.max_len_b = 9;
  Transformer* const one[] = {&model};
  const auto found = search(one, batch_of(kSources), o, {}, controls);
  for (size_t s = 0; s < kSources.size(); ++s) {
    const Tokens& prefix = controls[s].prefix;
    std::vector<double> row = log_softmax(full_logits(model, kSources[s], prefix));
    ban(row, prefix, 1, 9);
    std::vector<int32_t> order(row.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t x, int32_t y) { return row[x] > row[y]; });
    ASSERT_EQ(found[s].size(), 5u);
    for (size_t j = 0; j < 5; ++j) {
      const Hypothesis& h = found[s][j];
      if (order[j] == kEosId) {  // the prefix alone
        EXPECT_EQ(h.tokens, prefix);
        continue;
      }
      ASSERT_GT(h.tokens.size(), prefix.size());
      EXPECT_EQ(h.tokens[prefix.size()], order[j]) << "sentence " << s << " alternative " << j;
      Tokens forced = prefix;
      forced.push_back(order[j]);
      const testing::Ranked want = reference_greedy(model, kSources[s], forced, 1, 9);
      EXPECT_EQ(h.tokens, want.tokens);
      EXPECT_TRUE(testing::close(h.log_prob, want.log_prob, 1e-5));
    }
  }
}

// The probabilities sampling should draw the first token from: the step's log-probabilities
// (PAD and BOS banned) over temperature, kept as top-k or top-p keeps them, renormalised.
std::vector<double> sampling_distribution(std::vector<double> row, const SearchOptions& o) {
  row[kPadId] = row[kBosId] = -kInf;
  std::vector<int32_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t x, int32_t y) { return row[x] > row[y]; });
  std::vector<double> p(row.size(), 0.0);
  double sum = 0;
  for (int32_t v : order) sum += p[v] = std::exp(row[v] / o.temperature);
  size_t keep = order.size() - 2;
  if (o.sampling.kind == Sampling::Kind::kTopK) keep = static_cast<size_t>(o.sampling.k);
  if (o.sampling.kind == Sampling::Kind::kTopP) {
    double cumulative = 0;
    for (keep = 0; keep < order.size() && cumulative < o.sampling.p * sum;)
      cumulative += p[order[keep++]];
  }
  double kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i >= keep) p[order[i]] = 0;
    kept += p[order[i]];
  }
  for (double& x : p) x /= kept;
  return p;
}

// The first tokens of many samples follow sampling_distribution: a chi-square test at a 0.1%
// significance level (so a correct sampler fails one run in a thousand; the draws are seeded, so
// a given build passes or fails every time), and no token outside the kept ones is ever drawn.
TEST(DecodingControls, SamplesFollowTheAdjustedDistribution) {
  Transformer model(testing::small_random_config(23));
  testing::init_untrained(model, 13);
  const Tokens src = kSources[0];
  const std::vector<double> row = log_softmax(full_logits(model, src, {}));
  constexpr int kDraws = 20000;
  struct Case {
    const char* name;
    Sampling sampling;
    float temperature;
  };
  for (const Case& c : {Case{"full", {Sampling::Kind::kTopP, 0, 1.0f}, 1.0f},
                        Case{"top-k 5, T 0.7", {Sampling::Kind::kTopK, 5, 1.0f}, 0.7f},
                        Case{"top-p 0.6, T 1.5", {Sampling::Kind::kTopP, 0, 0.6f}, 1.5f}}) {
    SCOPED_TRACE(c.name);
    SearchOptions o;
    o.sampling = c.sampling;
    o.temperature = c.temperature;
    o.nbest = kDraws;
    o.min_len_b = 0;
    o.max_len_a = 0.0f;
    o.max_len_b = 1;  // one token, then EOS
    o.seed = 99;
    const std::vector<double> want = sampling_distribution(row, o);
    std::vector<int> count(want.size(), 0);
    Transformer* const one[] = {&model};
    const std::vector<std::vector<Hypothesis>> samples = search(one, testing::one_source(src), o);
    ASSERT_EQ(samples[0].size(), static_cast<size_t>(kDraws));
    for (const Hypothesis& h : samples[0]) ++count[h.tokens.empty() ? kEosId : h.tokens[0]];
    double chi2 = 0;
    int cells = 0;
    for (size_t v = 0; v < want.size(); ++v) {
      if (want[v] == 0) {
        EXPECT_EQ(count[v], 0) << "token " << v << " is not among the kept ones";
        continue;
      }
      const double expected = kDraws * want[v];
      chi2 += (count[v] - expected) * (count[v] - expected) / expected;
      ++cells;
    }
    ASSERT_GE(cells, 3);
    // The 99.9% quantile of chi-square with df = cells - 1 degrees of freedom (Wilson-Hilferty).
    const double df = cells - 1, z = 3.0902;
    const double critical = df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
    EXPECT_LT(chi2, critical) << cells << " cells";
  }
}

// A sentence's samples depend on the seed and its id alone: the same alone, in a batch, in
// another order, on one thread or two; another seed gives others.
TEST(DecodingControls, TheSameSeedGivesTheSameSamplesInAnyBatch) {
  testing::ThreadCountGuard guard;
  Transformer model(testing::small_random_config(512));
  testing::init_untrained(model, 14);
  Transformer* const one[] = {&model};
  SearchOptions o;
  o.sampling.kind = Sampling::Kind::kTopP;
  o.sampling.p = 0.95f;
  o.nbest = 3;
  o.seed = 5;
  std::vector<Tokens> pieces;
  for (const Tokens& s : kSources) pieces.emplace_back(s.begin(), s.end() - 1);  // without EOS
  std::vector<SentenceControls> controls;
  for (size_t i = 0; i < pieces.size(); ++i) controls.push_back({{}, 40 + i});
  set_threads(2);
  const auto together = search_sources(one, pieces, o, 4000, {}, controls);
  set_threads(1);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto alone = search_sources(one, {pieces[i]}, o, 4000, {}, {&controls[i], 1});
    ASSERT_EQ(alone[0].size(), 3u);
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(alone[0][j].tokens, together[i][j].tokens);
  }
  const std::vector<Tokens> reversed(pieces.rbegin(), pieces.rend());
  const std::vector<SentenceControls> reversed_controls(controls.rbegin(), controls.rend());
  const auto backwards = search_sources(one, reversed, o, 4000, {}, reversed_controls);
  for (size_t i = 0; i < pieces.size(); ++i)
    for (size_t j = 0; j < 3; ++j)
      EXPECT_EQ(backwards[pieces.size() - 1 - i][j].tokens, together[i][j].tokens);
  o.seed = 6;
  const auto other = search_sources(one, pieces, o, 4000, {}, controls);
  int differ = 0;
  for (size_t i = 0; i < pieces.size(); ++i) differ += other[i][0].tokens != together[i][0].tokens;
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace transduce
