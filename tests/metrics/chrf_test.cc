// chrF against hand-worked cases and against the scores sacreBLEU's own test suite expects
// (mjpost/sacrebleu test/test_chrf.py, checked there to 1e-4).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "metrics/chrf.h"

namespace transduce::metrics {
namespace {

double corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
              ChrfOptions options = {}) {
  return Chrf(options).corpus_score(hyps, {refs}).score;
}

ChrfOptions beta3(bool eps) {
  ChrfOptions o;
  o.beta = 3;
  o.eps_smoothing = eps;
  return o;
}

TEST(ChrfSacrebleu, EffectiveOrderCases) {
  // test_chrf.py test_cases_effective_order (beta 3, sacreBLEU's default averaging).
  EXPECT_NEAR(corpus({"a"}, {"a"}, beta3(false)), 100.0, 1e-4);
  EXPECT_NEAR(corpus({""}, {"reference"}, beta3(false)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({"a b c"}, {"a b c"}, beta3(false)), 100.0, 1e-4);
  EXPECT_NEAR(corpus({"a b c"}, {"abc"}, beta3(false)), 100.0, 1e-4);
  EXPECT_NEAR(corpus({""}, {"c"}, beta3(false)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({"a", "b"}, {"a", "c"}, beta3(false)), 50.0, 1e-4);
  EXPECT_NEAR(corpus({"aa"}, {"ab"}, beta3(false)), 25.0, 1e-4);
}

TEST(ChrfSacrebleu, EpsilonSmoothingCases) {
  // test_chrf.py test_cases (beta 3, eps_smoothing=True: the F-score of every order averaged).
  EXPECT_NEAR(corpus({"abcdefg"}, {"hijklmnop"}, beta3(true)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({"a"}, {"b"}, beta3(true)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({""}, {"b"}, beta3(true)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({""}, {"ref"}, beta3(true)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({""}, {"reference"}, beta3(true)), 0.0, 1e-4);
  EXPECT_NEAR(corpus({"aa"}, {"ab"}, beta3(true)), 8.3333, 1e-4);
  EXPECT_NEAR(corpus({"a", "b"}, {"a", "c"}, beta3(true)), 8.3333, 1e-4);
  EXPECT_NEAR(corpus({"a"}, {"a"}, beta3(true)), 16.6667, 1e-4);
  EXPECT_NEAR(corpus({"a b c"}, {"a b c"}, beta3(true)), 50.0, 1e-4);
  EXPECT_NEAR(corpus({"a b c"}, {"abc"}, beta3(true)), 50.0, 1e-4);
  EXPECT_NEAR(corpus({" risk assessment must be made of those who are qualified and expertise in "
                      "the sector - these are the scientists ."},
                     {"risk assessment has to be undertaken by those who are qualified and expert "
                      "in that area - that is the scientists ."},
                     beta3(true)),
              63.361730, 1e-4);
  EXPECT_NEAR(corpus({" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  "
                      "freundlich. "},
                     {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade "
                      "freundschaftlich."},
                     beta3(true)),
              64.1302698, 1e-4);
  EXPECT_NEAR(corpus({"Niemand hat die Absicht, eine Mauer zu errichten"},
                     {"Niemand hat die Absicht, eine Mauer zu errichten"}, beta3(true)),
              100.0, 1e-4);
}

TEST(ChrfSacrebleu, KeepingWhitespace) {
  // test_chrf.py test_cases_keep_whitespace (beta 3, whitespace kept in the n-grams).
  ChrfOptions o = beta3(false);
  o.whitespace = true;
  EXPECT_NEAR(corpus({"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
                     {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade "
                      "freundschaftlich."},
                     o),
              67.3481606, 1e-4);
  EXPECT_NEAR(corpus({"risk assessment must be made of those who are qualified and expertise in "
                      "the sector - these are the scientists ."},
                     {"risk assessment has to be undertaken by those who are qualified and expert "
                      "in that area - that is the scientists ."},
                     o),
              65.2414427, 1e-4);
}

TEST(ChrfSacrebleu, SentenceLevelCzech) {
  // test_chrf.py test_sentence_level_chrf: sacreBLEU's default chrF (beta 2) with epsilon
  // smoothing, on Czech with its diacritics (code points, not bytes, are the characters).
  ChrfOptions o;
  o.eps_smoothing = true;
  const Chrf chrf(o);
  EXPECT_NEAR(chrf.sentence_score(
                      "Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
                      {"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo "
                       "zemře."})
                  .score,
              39.14078509, 1e-4);
  EXPECT_NEAR(
      chrf.sentence_score("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
                          {"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali "
                           "lékaři."})
          .score,
      31.22557079, 1e-4);
  EXPECT_NEAR(
      chrf.sentence_score("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
                          {"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl "
                           "začít, připomněli."})
          .score,
      57.15704367, 1e-4);
}

TEST(ChrfHand, PerfectMatchIs100) {
  EXPECT_DOUBLE_EQ(corpus({"The cat sat on the mat.", "Ünïcödé text"},
                          {"The cat sat on the mat.", "Ünïcödé text"}),
                   100.0);
  // Whitespace is removed before counting: spacing differences do not matter.
  EXPECT_DOUBLE_EQ(corpus({"a b c d e f g"}, {"abc defg"}), 100.0);
}

TEST(ChrfHand, ReferenceShorterThanTheOrder) {
  // hyp "abcdef", ref "ab", beta 2:
  //   order 1: hyp 6, ref 2, matches 2 (a, b)  -> P 2/6, R 2/2
  //   order 2: hyp 5, ref 1, matches 1 ("ab")  -> P 1/5, R 1/1
  //   orders 3..6: the reference has none, so those hypothesis n-grams are not counted either.
  // Averaged over the 2 effective orders: P = (1/3 + 1/5) / 2 = 4/15, R = 1;
  // F2 = 5 P R / (4 P + R) = (4/3) / (31/15) = 20/31 = 64.516%.
  const Chrf chrf;
  const ChrfStats st = chrf.segment_stats("abcdef", {"ab"});
  EXPECT_EQ(st.counts,
            (std::vector<int64_t>{6, 2, 2, 5, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_NEAR(chrf.compute(st).score, 100.0 * 20.0 / 31.0, 1e-9);
  EXPECT_EQ(chrf.compute(st).format(), "chrF2 = 64.52");
}

TEST(ChrfHand, CorpusStatisticsAreSummedBeforeScoring) {
  // Two segments: "ab" vs "ab" (orders 1, 2: all match) and "cd" vs "ce" (order 1: 1 of 2,
  // order 2: 0 of 1). Summed: order 1 3/4 both ways, order 2 1/2 both ways, so P = R = 5/8 and
  // chrF = 62.5 -- not the mean of the sentence scores (100 and 25).
  const double s = corpus({"ab", "cd"}, {"ab", "ce"});
  EXPECT_NEAR(s, 62.5, 1e-9);
}

TEST(ChrfHand, EmptyHypothesisScoresZero) {
  EXPECT_EQ(corpus({""}, {"abc"}), 0.0);
  EXPECT_EQ(corpus({"", " "}, {"abc", "def"}), 0.0);
  // An empty line among good ones: its reference n-grams still count against recall.
  // "abc" vs "abc": orders 1..3, 6/6 hyp, 6/6 ref matched; "" vs "de": 0 hyp, 3 ref (d, e, de).
  // Order 1: P 3/3, R 3/5; order 2: P 2/2, R 2/3; order 3: P 1/1, R 1/1.
  // P = 1, R = (3/5 + 2/3 + 1) / 3 = 34/45; F2 = 5 P R / (4 P + R) = (170/45) / (214/45).
  EXPECT_NEAR(corpus({"abc", ""}, {"abc", "de"}), 100.0 * 170.0 / 214.0, 1e-9);
}

TEST(ChrfHand, MultipleReferencesPickTheBestPerSentence) {
  // Each hypothesis matches one of the two references perfectly: chrF 100.
  const Chrf chrf;
  EXPECT_DOUBLE_EQ(chrf.corpus_score({"abc", "abd"}, {{"abc", "xyz"}, {"xyz", "abd"}}).score,
                   100.0);
  // The chosen reference's statistics are the ones summed: "abc" against "ab" or "zzz" takes
  // "ab" (F 64.5% vs 0), and its counts.
  const ChrfStats st = chrf.segment_stats("abc", {"zzz", "ab"});
  EXPECT_EQ(st.counts[1], 2);  // ref unigrams of "ab"
  EXPECT_EQ(st.counts[2], 2);  // matches a, b
  // Empty references are left out; all empty is an error.
  EXPECT_DOUBLE_EQ(chrf.corpus_score({"abc"}, {{""}, {"abc"}}).score, 100.0);
  EXPECT_THROW(chrf.corpus_score({"abc"}, {{""}}), Error);
}

TEST(ChrfHand, LowercaseAndUnicodeWhitespace) {
  ChrfOptions o;
  o.lowercase = true;
  EXPECT_DOUBLE_EQ(corpus({"ÉTÉ À PARIS"}, {"été à paris"}, o), 100.0);
  EXPECT_LT(corpus({"ÉTÉ À PARIS"}, {"été à paris"}), 100.0);
  // No-break and ideographic spaces are whitespace, as for Python's str.split().
  EXPECT_DOUBLE_EQ(corpus({"ab\u00a0cd\u3000ef"}, {"abcdef"}), 100.0);
}

TEST(ChrfSignature, NamesSacrebleusFields) {
  EXPECT_EQ(Chrf().signature("1"),
            "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:transduce-1.0");
  ChrfOptions o;
  o.lowercase = true;
  o.eps_smoothing = true;
  o.whitespace = true;
  EXPECT_EQ(Chrf(o).signature("2"),
            "nrefs:2|case:lc|eff:no|nc:6|nw:0|space:yes|version:transduce-1.0");
  EXPECT_EQ((ChrfScore{84.0834, 2}.format()), "chrF2 = 84.08");
}

}  // namespace
}  // namespace transduce::metrics
