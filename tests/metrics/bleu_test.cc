// Corpus and sentence BLEU against hand-worked cases and against the scores sacreBLEU's own test
// suite expects (mjpost/sacrebleu test/test_bleu.py and test/test_sentence_bleu.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "metrics/bleu.h"

namespace transduce::metrics {
namespace {

BleuScore corpus(const std::vector<std::string>& hyps, const ReferenceStreams& refs,
                 BleuOptions options = {}) {
  return Bleu(options).corpus_score(hyps, refs);
}

// sacreBLEU's README example (test_bleu.py: test_corpus_bleu_cases): three hypotheses, two
// reference streams.
const std::vector<std::string> kReadmeHyps = {
    "The dog bit the man.",
    "It wasn't surprising.",
    "The man had just bitten him.",
};
const ReferenceStreams kReadmeRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

TEST(BleuSacrebleu, ReadmeExampleWithEachTokenizer) {
  // Expected values from sacreBLEU's test_bleu.py; it checks them to 1e-8.
  EXPECT_NEAR(corpus(kReadmeHyps, kReadmeRefs).score, 48.530827, 1e-6);
  BleuOptions o;
  o.tokenizer = TokenizerKind::kNone;
  EXPECT_NEAR(corpus(kReadmeHyps, kReadmeRefs, o).score, 49.1919566, 1e-6);
  o.tokenizer = TokenizerKind::k13a;
  EXPECT_NEAR(corpus(kReadmeHyps, kReadmeRefs, o).score, 48.530827, 1e-6);
  o.tokenizer = TokenizerKind::kIntl;
  EXPECT_NEAR(corpus(kReadmeHyps, kReadmeRefs, o).score, 43.91623493, 1e-6);
  o = {};
  o.smoothing = BleuSmoothing::kNone;
  EXPECT_NEAR(corpus(kReadmeHyps, kReadmeRefs, o).score, 48.530827, 1e-6);
}

TEST(BleuSacrebleu, EmptyHypothesesAreKeptAndScoreZero) {
  // test_bleu.py: ('', '', '') against the README references is 0.0, and the empty lines still
  // count: the reference length is the shortest reference of each segment (4 + 5 + 6).
  const BleuScore s = corpus({"", "", ""}, kReadmeRefs);
  EXPECT_EQ(s.score, 0.0);
  EXPECT_EQ(s.hyp_len, 0);
  EXPECT_EQ(s.ref_len, 6 + 5 + 6);
  EXPECT_EQ(s.bp, 0.0);
  EXPECT_EQ(s.format(),
            "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 17)");
}

TEST(BleuSacrebleu, MatchStatistics) {
  // test_bleu.py test_case_statistics, whitespace tokens:
  //   hyp  am I am a character sequence        (6 tokens)
  //   ref  I am a symbol string sequence a a   (8 tokens)
  // unigrams: am min(2,1)=1, I 1, a 1, sequence 1, character 0 -> 4 of 6; bigrams "I am",
  // "am a" -> 2 of 5; trigram "I am a" -> 1 of 4; 4-grams 0 of 3.
  BleuOptions o;
  o.tokenizer = TokenizerKind::kNone;
  const BleuStats st =
      Bleu(o).segment_stats("am I am a character sequence", {"I am a symbol string sequence a a"});
  EXPECT_EQ(st.correct, (std::vector<int64_t>{4, 2, 1, 0}));
  EXPECT_EQ(st.total, (std::vector<int64_t>{6, 5, 4, 3}));
  EXPECT_EQ(st.hyp_len, 6);
  EXPECT_EQ(st.ref_len, 8);
}

TEST(BleuSacrebleu, ScoreFromStatistics) {
  // test_bleu.py test_case_scoring: counts 9/7/5/3 of 10/8/6/4, lengths 11 and 11, no smoothing:
  // (0.9 * 0.875 * 0.8333 * 0.75)^(1/4) = 0.8375922397.
  BleuStats st;
  st.correct = {9, 7, 5, 3};
  st.total = {10, 8, 6, 4};
  st.hyp_len = st.ref_len = 11;
  BleuOptions o;
  o.smoothing = BleuSmoothing::kNone;
  EXPECT_NEAR(compute_bleu(st, o).score, 83.75922397, 1e-7);
}

TEST(BleuSacrebleu, SentenceBleuWithEachSmoothing) {
  // test_sentence_bleu.py (sacreBLEU issue #98), effective order on, checked there to 1e-3.
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string hyp =
      "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  struct Case {
    BleuSmoothing smoothing;
    std::optional<double> value;
    TokenizerKind tokenizer;
    double expected;
  };
  const std::vector<Case> cases = {
      {BleuSmoothing::kExp, std::nullopt, TokenizerKind::k13a, 8.493},
      {BleuSmoothing::kNone, std::nullopt, TokenizerKind::k13a, 0.0},
      {BleuSmoothing::kFloor, std::nullopt, TokenizerKind::k13a, 4.51688},
      {BleuSmoothing::kFloor, 0.1, TokenizerKind::k13a, 4.51688},
      {BleuSmoothing::kFloor, 0.5, TokenizerKind::k13a, 10.10},
      {BleuSmoothing::kAddK, std::nullopt, TokenizerKind::k13a, 14.882},
      {BleuSmoothing::kAddK, 1.0, TokenizerKind::k13a, 14.882},
      {BleuSmoothing::kAddK, 2.0, TokenizerKind::k13a, 21.389},
      {BleuSmoothing::kExp, std::nullopt, TokenizerKind::kNone, 7.347},
      {BleuSmoothing::kExp, std::nullopt, TokenizerKind::kIntl, 8.493},
  };
  for (const Case& c : cases) {
    BleuOptions o;
    o.smoothing = c.smoothing;
    o.smooth_value = c.value;
    o.tokenizer = c.tokenizer;
    o.effective_order = true;
    EXPECT_NEAR(Bleu(o).sentence_score(hyp, {ref}).score, c.expected, 1e-3)
        << static_cast<int>(c.smoothing) << " " << tokenizer_name(c.tokenizer);
  }
}

TEST(BleuSacrebleu, NoMatchIsZeroWhateverTheSmoothing) {
  // test_sentence_bleu.py (sacreBLEU issue #141): "this is a cat" vs "okay thanks" is 0.0.
  for (BleuSmoothing sm :
       {BleuSmoothing::kExp, BleuSmoothing::kNone, BleuSmoothing::kFloor, BleuSmoothing::kAddK}) {
    BleuOptions o;
    o.smoothing = sm;
    o.effective_order = true;
    const BleuScore s = Bleu(o).sentence_score("this is a cat", {"okay thanks"});
    EXPECT_EQ(s.score, 0.0);
    EXPECT_EQ(s.precisions, (std::vector<double>{0, 0, 0, 0}));
  }
  // The corpus default as well.
  EXPECT_EQ(corpus({"this is a cat"}, {{"okay thanks"}}).score, 0.0);
}

TEST(BleuHand, PerfectMatchIs100) {
  const BleuScore s = corpus({"The cat sat on the mat.", "A dog barked loudly at night."},
                             {{"The cat sat on the mat.", "A dog barked loudly at night."}});
  EXPECT_DOUBLE_EQ(s.score, 100.0);
  EXPECT_EQ(s.bp, 1.0);
  // 13a: 7 + 7 tokens (the final periods split off).
  EXPECT_EQ(s.format(),
            "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 14 "
            "ref_len = 14)");
}

TEST(BleuHand, ShortHypothesisPaysTheBrevityPenalty) {
  // hyp "the cat sat on the" (5 tokens) against "the cat sat on the mat" (6): every n-gram of
  // the hypothesis matches (5/5, 4/4, 3/3, 2/2), so BLEU = BP = exp(1 - 6/5) = 0.81873.
  const BleuScore s = corpus({"the cat sat on the"}, {{"the cat sat on the mat"}});
  EXPECT_NEAR(s.bp, std::exp(1.0 - 6.0 / 5.0), 1e-12);
  EXPECT_NEAR(s.score, 100 * std::exp(-0.2), 1e-9);
  EXPECT_EQ(s.format(),
            "BLEU = 81.87 100.0/100.0/100.0/100.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 "
            "ref_len = 6)");
}

TEST(BleuHand, ExponentialSmoothingHalvesEachZeroOrder) {
  // hyp "a b c d e" vs ref "a b x d e": unigrams 4/5 (80%), bigrams "a b", "d e" 2/4 (50%),
  // trigrams 0/3 and 4-grams 0/2. exp smoothing: the first zero order gets 1/(2*3) = 16.67%,
  // the second 1/(4*2) = 12.5%. BLEU = (80 * 50 * 16.667 * 12.5)^(1/4) = 30.2138.
  const BleuScore s = corpus({"a b c d e"}, {{"a b x d e"}});
  const double expected = std::pow(80.0 * 50.0 * (100.0 / 6.0) * 12.5, 0.25);
  EXPECT_NEAR(s.score, expected, 1e-9);
  EXPECT_NEAR(s.score, 30.2138, 1e-4);
  EXPECT_EQ(s.format(),
            "BLEU = 30.21 80.0/50.0/16.7/12.5 (BP = 1.000 ratio = 1.000 hyp_len = 5 ref_len = 5)");
}

TEST(BleuHand, CorpusOfShortSentencesScoresZero) {
  // Without effective order, an order with no hypothesis n-gram at all (here no 4-gram in a
  // 3-token corpus) has precision 0, and sacreBLEU's log floor makes the score 0.
  const BleuScore s = corpus({"the cat sat"}, {{"the cat sat"}});
  EXPECT_EQ(s.totals, (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_NEAR(s.score, 0.0, 1e-12);
  BleuOptions o;
  o.effective_order = true;
  EXPECT_DOUBLE_EQ(corpus({"the cat sat"}, {{"the cat sat"}}, o).score, 100.0);
}

TEST(BleuHand, MultipleReferencesClipByTheLargestCount) {
  // hyp   "the the cat sat down"        (5 tokens)
  // ref1  "the cat sat down"            (4)
  // ref2  "the the the cat is here"     (6)
  // unigrams: "the" x2 clipped by max(1, 3) = 3 -> 2; cat, sat, down -> 5/5.
  // bigrams: "the the" (ref2), "the cat", "cat sat", "sat down" -> 4/4.
  // trigrams: "the the cat" (ref2), "the cat sat", "cat sat down" (ref1) -> 3/3.
  // 4-grams: "the the cat sat" none, "the cat sat down" (ref1) -> 1/2.
  // BLEU = (100 * 100 * 100 * 50)^(1/4) = 84.0896. Closest length: |5-4| = |5-6| = 1, a tie,
  // so the shorter, 4: BP = 1, ratio 5/4.
  const std::vector<std::string> hyp = {"the the cat sat down"};
  const BleuScore s = corpus(hyp, {{"the cat sat down"}, {"the the the cat is here"}});
  EXPECT_EQ(s.counts, (std::vector<int64_t>{5, 4, 3, 1}));
  EXPECT_EQ(s.totals, (std::vector<int64_t>{5, 4, 3, 2}));
  EXPECT_NEAR(s.score, 100 * std::pow(0.5, 0.25), 1e-9);
  EXPECT_EQ(s.ref_len, 4);
  EXPECT_EQ(s.format(),
            "BLEU = 84.09 100.0/100.0/100.0/50.0 (BP = 1.000 ratio = 1.250 hyp_len = 5 "
            "ref_len = 4)");
  // The tie goes to the shorter reference whatever the order of the streams.
  EXPECT_EQ(corpus(hyp, {{"the the the cat is here"}, {"the cat sat down"}}).ref_len, 4);
  // With ref1 alone the second "the" is not a match: 4/5, 3/4, 2/3, 1/2.
  const BleuScore one = corpus(hyp, {{"the cat sat down"}});
  EXPECT_EQ(one.counts, (std::vector<int64_t>{4, 3, 2, 1}));
}

TEST(BleuHand, ClosestReferenceLengthDecidesTheBrevityPenalty) {
  // hyp 4 tokens; references of 5 and 9 tokens: the closest is 5, BP = exp(1 - 5/4).
  const BleuScore s = corpus({"a b c d"}, {{"a b c d e"}, {"a b c d e f g h i"}});
  EXPECT_EQ(s.ref_len, 5);
  EXPECT_NEAR(s.bp, std::exp(1.0 - 5.0 / 4.0), 1e-12);
}

TEST(BleuHand, EmptyHypothesisLineCountsItsReference) {
  // The empty second hypothesis adds nothing to the n-gram counts but its reference's 2 tokens
  // to ref_len: 6 vs 8 tokens, all n-grams matching, BLEU = BP = exp(1 - 8/6) = 0.71653.
  const BleuScore s =
      corpus({"the cat sat on the mat", ""}, {{"the cat sat on the mat", "hello there"}});
  EXPECT_EQ(s.hyp_len, 6);
  EXPECT_EQ(s.ref_len, 8);
  EXPECT_NEAR(s.score, 100 * std::exp(1.0 - 8.0 / 6.0), 1e-9);
}

TEST(BleuHand, EmptyReferenceLinesAreLeftOut) {
  // A segment with one empty reference uses the others (sacreBLEU drops "" references); when
  // every reference is empty it is an error, as in sacreBLEU.
  const BleuScore s = corpus({"a b c d", "e f g h"}, {{"a b c d", "e f g h"}, {"", "x"}});
  EXPECT_DOUBLE_EQ(s.score, 100.0);
  EXPECT_EQ(nrefs_label({{"a b c d", "e f g h"}, {"", "x"}}, 2), "var");
  EXPECT_EQ(nrefs_label({{"a", "b"}, {"c", "d"}}, 2), "2");
  EXPECT_THROW(corpus({"a b c d"}, {{""}}), Error);
  EXPECT_THROW(corpus({"a", "b"}, {{"a"}}), Error);  // stream length differs
}

TEST(BleuHand, LowercaseMatchesAcrossCase) {
  BleuOptions o;
  o.lowercase = true;
  EXPECT_DOUBLE_EQ(corpus({"THE CAT SAT ON ÉTÉ"}, {{"the cat sat on été"}}, o).score, 100.0);
  EXPECT_LT(corpus({"THE CAT SAT ON ÉTÉ"}, {{"the cat sat on été"}}).score, 1.0);
}

TEST(BleuHand, TrailingWhitespaceIsIgnored) {
  BleuOptions o;
  o.tokenizer = TokenizerKind::kNone;
  const Bleu bleu(o);
  EXPECT_EQ(bleu.preprocess("a  b \t"), "a  b");
  EXPECT_DOUBLE_EQ(bleu.corpus_score({"a b  c d \u00a0"}, {{" a b c d"}}).score, 100.0);
}

TEST(BleuSignature, NamesSacrebleusFields) {
  EXPECT_EQ(Bleu().signature("1"),
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:transduce-1.0");
  BleuOptions o;
  o.lowercase = true;
  o.tokenizer = TokenizerKind::kIntl;
  o.smoothing = BleuSmoothing::kFloor;
  o.effective_order = true;
  EXPECT_EQ(Bleu(o).signature("var"),
            "nrefs:var|case:lc|eff:yes|tok:intl|smooth:floor[0.10]|version:transduce-1.0");
  o.smoothing = BleuSmoothing::kAddK;
  o.smooth_value = 2;
  EXPECT_NE(Bleu(o).signature("2").find("smooth:add-k[2.00]"), std::string::npos);
}

TEST(BleuStatsApi, SegmentStatisticsSumToTheCorpus) {
  const Bleu bleu;
  BleuStats sum;
  for (size_t i = 0; i < kReadmeHyps.size(); ++i)
    sum += bleu.segment_stats(kReadmeHyps[i], segment_references(kReadmeRefs, i));
  EXPECT_DOUBLE_EQ(bleu.compute(sum).score, corpus(kReadmeHyps, kReadmeRefs).score);
}

}  // namespace
}  // namespace transduce::metrics
