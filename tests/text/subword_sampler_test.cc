// Subword regularisation on real text (Multi30k): sampled segmentations spell the same sentence,
// differ from the deterministic one, and an epoch's samples are a function of (seed, epoch) alone.
#include "text/subword_sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/bpe_dropout_reference.h"
#include "support/shared_data.h"
#include "support/thread_count.h"
#include "text/corpus.h"
#include "text/special_ids.h"
#include "text/tokenizer.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

constexpr size_t kLines = 3000;

// The first kLines pairs of Multi30k's en-de training data, and a BPE and a unigram vocabulary of
// 2,000 pieces learnt on them, shared by the tests below.
class Multi30kSampling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/transduce_sampler_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    text_ = new ParallelText;
    std::vector<std::string> inputs;
    for (const char* lang : {"en", "de"}) {
      std::vector<std::string> lines =
          read_lines(testing::shared_data_file(std::string("multi30k/train.") + lang));
      lines.resize(std::min(lines.size(), kLines));
      inputs.push_back(*dir_ + "/head." + lang);
      std::ofstream out(inputs.back());
      for (const std::string& l : lines) out << l << '\n';
      (std::string(lang) == "en" ? text_->src : text_->tgt) = std::move(lines);
    }
    Tokenizer::train(inputs, 2000, "bpe", *dir_ + "/bpe", 2);
    Tokenizer::train(inputs, 2000, "unigram", *dir_ + "/uni", 2);
    bpe_ = new Tokenizer(*dir_ + "/bpe.model");
    uni_ = new Tokenizer(*dir_ + "/uni.model");
  }
  static void TearDownTestSuite() {
    delete bpe_;
    delete uni_;
    delete text_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  static SubwordSampler sampler(float alpha, uint64_t seed, int max_len = 0,
                                const Tokenizer* tok = nullptr) {
    return SubwordSampler(tok ? *tok : *bpe_, text_->src, text_->tgt, max_len, alpha, seed);
  }

  static std::string* dir_;
  static ParallelText* text_;
  static Tokenizer* bpe_;
  static Tokenizer* uni_;
};
std::string* Multi30kSampling::dir_ = nullptr;
ParallelText* Multi30kSampling::text_ = nullptr;
Tokenizer* Multi30kSampling::bpe_ = nullptr;
Tokenizer* Multi30kSampling::uni_ = nullptr;

// Sampled segmentations decode to the sentence, are mostly not the deterministic one, and are
// longer on average (BPE-dropout skips merges; unigram sampling favours no length but rarely
// picks the best segmentation); alpha 0 leaves BPE's own segmentation.
void expect_sampling_varies(const Tokenizer& tok, const std::vector<std::string>& lines,
                            float alpha, bool longer) {
  size_t differ = 0, sampled_tokens = 0, own_tokens = 0;
  for (const std::string& line : lines) {
    const std::vector<int32_t> own = tok.encode(line), ids = tok.sample_encode(line, alpha);
    ASSERT_EQ(tok.decode(ids), tok.decode(own)) << line;
    differ += ids != own;
    sampled_tokens += ids.size();
    own_tokens += own.size();
  }
  EXPECT_GT(differ, lines.size() / 2) << "of " << lines.size() << " sentences";
  if (longer) {
    EXPECT_GT(sampled_tokens, own_tokens + own_tokens / 20);
  }
}

TEST_F(Multi30kSampling, BpeDropoutSpellsTheSameSentenceDifferently) {
  const std::vector<std::string> lines(text_->tgt.begin(), text_->tgt.begin() + 500);
  expect_sampling_varies(*bpe_, lines, 0.1f, true);
  for (const std::string& line : lines) EXPECT_EQ(bpe_->sample_encode(line, 0), bpe_->encode(line));
}

TEST_F(Multi30kSampling, UnigramSamplingSpellsTheSameSentenceDifferently) {
  const std::vector<std::string> lines(text_->src.begin(), text_->src.begin() + 500);
  expect_sampling_varies(*uni_, lines, 0.2f, false);
}

// How many pieces BPE-dropout at a rate adds, against what the rate predicts: the sampler's
// segmentations over several epochs against an independent BPE-dropout (support/
// bpe_dropout_reference.h) over the same sentences, on average within 4 standard errors of the
// two Monte Carlo means. The same comparison is far outside that band for half and for twice the
// rate, so a rate passed on wrongly either way fails.
TEST_F(Multi30kSampling, BpeDropoutAddsThePiecesItsRatePredicts) {
  constexpr float kRate = 0.1f;
  constexpr int kEpochs = 6, kDraws = 12;
  constexpr size_t kPairs = 1000;
  const ParallelText head{
      std::vector<std::string>(text_->src.begin(), text_->src.begin() + kPairs),
      std::vector<std::string>(text_->tgt.begin(), text_->tgt.begin() + kPairs)};
  const SubwordSampler s(*bpe_, head.src, head.tgt, 0, kRate, 3);
  std::vector<std::vector<Example>> epochs(kEpochs);
  for (int e = 0; e < kEpochs; ++e) s.encode_epoch(e, epochs[static_cast<size_t>(e)]);
  const testing::BpeDropoutReference reference(*dir_ + "/bpe.model");

  // Per sentence: its own piece count, the sampler's mean count, and the reference's draws.
  struct Sentence {
    std::string normalised;
    double own = 0, sampled = 0;
  };
  std::vector<Sentence> sentences;
  for (size_t i = 0; i < kPairs; ++i)
    for (bool source : {true, false}) {
      const std::string& line = source ? head.src[i] : head.tgt[i];
      const std::vector<int32_t> own = bpe_->encode(line);
      if (std::find(own.begin(), own.end(), kUnkId) != own.end()) continue;  // no text to merge
      Sentence sentence;
      for (int32_t id : own) sentence.normalised += bpe_->piece(id);
      sentence.own = static_cast<double>(own.size());
      for (const auto& epoch : epochs)
        sentence.sampled += static_cast<double>((source ? epoch[i].src : epoch[i].tgt).size());
      sentence.sampled /= kEpochs;
      sentences.push_back(std::move(sentence));
    }
  ASSERT_GT(sentences.size(), 1900u);
  // Without dropout the reference is BPE itself: the vocabulary's own segmentations.
  SplitMix64 rng(11);
  size_t differ = 0;
  for (const Sentence& sentence : sentences)
    if (reference.pieces(sentence.normalised, 0.0f, rng) != sentence.own && ++differ <= 3)
      ADD_FAILURE() << "the reference's BPE cuts " << sentence.normalised << " otherwise";
  ASSERT_EQ(differ, 0u);

  // The difference of the two means, in standard errors of the difference (per sentence, the
  // spread of the reference's draws stands for both: the same distribution if they agree).
  auto standard_errors = [&](float rate, double* growth, double* predicted) {
    double sum_sampled = 0, sum_predicted = 0, variance = 0, own = 0;
    for (const Sentence& sentence : sentences) {
      double sum = 0, sum_sq = 0;
      for (int d = 0; d < kDraws; ++d) {
        const auto n = static_cast<double>(reference.pieces(sentence.normalised, rate, rng));
        sum += n;
        sum_sq += n * n;
      }
      const double mean = sum / kDraws;
      sum_predicted += mean;
      sum_sampled += sentence.sampled;
      own += sentence.own;
      variance += (sum_sq - kDraws * mean * mean) / (kDraws - 1) * (1.0 / kEpochs + 1.0 / kDraws);
    }
    const auto n = static_cast<double>(sentences.size());
    *growth = (sum_sampled - own) / n;
    *predicted = (sum_predicted - own) / n;
    return (sum_sampled - sum_predicted) / n / (std::sqrt(variance) / n);
  };
  double growth = 0, predicted = 0;
  const double at_rate = standard_errors(kRate, &growth, &predicted);
  EXPECT_LT(std::fabs(at_rate), 4.0) << "pieces added per sentence: " << growth << ", predicted "
                                     << predicted << " at dropout " << kRate;
  EXPECT_GT(growth, 0.5) << "dropout " << kRate << " barely lengthens the segmentations";
  for (float wrong : {kRate / 2, kRate * 2}) {
    double g = 0, p = 0;
    EXPECT_GT(std::fabs(standard_errors(wrong, &g, &p)), 8.0)
        << "the sampler's " << g << " pieces added is also what dropout " << wrong << " predicts ("
        << p << "): the check could not tell the rates apart";
  }
}

// Pairs of one epoch's examples that differ from those of `other`.
size_t pairs_differing(const std::vector<Example>& a, const std::vector<Example>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i].src != b[i].src || a[i].tgt != b[i].tgt;
  return n;
}

TEST_F(Multi30kSampling, AnEpochIsAFunctionOfSeedAndEpochAlone) {
  testing::ThreadCountGuard guard;
  const SubwordSampler s = sampler(0.1f, 7);
  std::vector<Example> e0, e0_again, e0_two_threads, e1, other_seed;
  set_threads(1);
  s.encode_epoch(0, e0);
  s.encode_epoch(1, e1);
  s.encode_epoch(0, e0_again);  // after another epoch was drawn: the same again
  set_threads(2);
  s.encode_epoch(0, e0_two_threads);
  sampler(0.1f, 8).encode_epoch(0, other_seed);

  ASSERT_EQ(e0.size(), kLines);
  EXPECT_EQ(pairs_differing(e0, e0_again), 0u);
  EXPECT_EQ(pairs_differing(e0, e0_two_threads), 0u);
  EXPECT_GT(pairs_differing(e0, e1), kLines / 2);
  EXPECT_GT(pairs_differing(e0, other_seed), kLines / 2);
  // Every example spells its pair, in the pairs' order.
  for (size_t i = 0; i < kLines; ++i) {
    EXPECT_EQ(bpe_->decode(e1[i].src), bpe_->decode(bpe_->encode(text_->src[i]))) << i;
    EXPECT_EQ(bpe_->decode(e1[i].tgt), bpe_->decode(bpe_->encode(text_->tgt[i]))) << i;
  }
}

// A side whose sample runs past max_len keeps the deterministic segmentation, which fits.
TEST_F(Multi30kSampling, SamplesLongerThanTheLimitFallBackToTheVocabularysOwn) {
  constexpr int kMaxLen = 16;
  const std::vector<Example> own = encode_parallel(*text_, *bpe_, kMaxLen, nullptr);
  std::vector<int64_t> kept;
  encode_parallel(*text_, *bpe_, kMaxLen, nullptr, &kept);
  ParallelText fitting;
  for (int64_t line : kept) {
    fitting.src.push_back(text_->src[static_cast<size_t>(line)]);
    fitting.tgt.push_back(text_->tgt[static_cast<size_t>(line)]);
  }
  ASSERT_GT(fitting.src.size(), 500u);
  const SubwordSampler s(*bpe_, fitting.src, fitting.tgt, kMaxLen, 0.3f, 1);
  std::vector<Example> sampled;
  s.encode_epoch(0, sampled);
  ASSERT_EQ(sampled.size(), own.size());
  // Sides at the limit can take no longer sample, and a dropout of 0.3 lengthens nearly all of
  // them: they keep their own segmentation. Short sides, with room to spare, mostly do not.
  size_t at_limit = 0, at_limit_own = 0, short_sides = 0, short_own = 0;
  for (size_t i = 0; i < sampled.size(); ++i) {
    for (const auto* side : {&sampled[i].src, &sampled[i].tgt})
      EXPECT_LE(static_cast<int>(side->size()) + 1, kMaxLen) << i;
    const int own_len = static_cast<int>(own[i].tgt.size()) + 1;
    if (own_len == kMaxLen) {
      ++at_limit;
      at_limit_own += sampled[i].tgt == own[i].tgt;
    } else if (own_len <= kMaxLen / 2) {
      ++short_sides;
      short_own += sampled[i].tgt == own[i].tgt;
    }
  }
  ASSERT_GT(at_limit, 20u);
  ASSERT_GT(short_sides, 20u);
  EXPECT_GT(at_limit_own, at_limit * 8 / 10) << "of " << at_limit;
  EXPECT_LT(short_own, short_sides / 2) << "of " << short_sides;
}

TEST_F(Multi30kSampling, AlphaOutsideZeroToOneIsRefused) {
  for (float alpha : {0.0f, 1.0f, -0.1f}) {
    try {
      sampler(alpha, 1);
      ADD_FAILURE() << "alpha " << alpha << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--subword-sampling"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace transduce
