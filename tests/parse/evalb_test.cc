// EVALB's rules with COLLINS.prm, one test per rule. Every expected number is worked out by hand in
// the comments and was checked to equal EVALB's own output (evalb -p COLLINS.prm) on the same
// trees, except where a test says it shows the deliberate difference (the root bracket).
#include "parse/evalb.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "parse/tree.h"

namespace transduce::parse {
namespace {

Tree tree(const std::string& text) {
  std::vector<Tree> trees = read_trees(text, "test");
  EXPECT_EQ(trees.size(), 1u) << text;
  return trees.front();
}

EvalbSentence score(const std::string& gold, const std::string& test,
                    const EvalbOptions& options = {}) {
  return evalb_sentence(tree(gold), tree(test), options);
}

// matched, gold brackets, test brackets, crossing, words, correct tags
void expect_counts(const EvalbSentence& s, int64_t matched, int64_t gold, int64_t test,
                   int64_t crossing, int64_t words, int64_t tags) {
  EXPECT_EQ(s.status, EvalbStatus::kScored) << s.problem;
  EXPECT_EQ(s.matched, matched);
  EXPECT_EQ(s.gold_brackets, gold);
  EXPECT_EQ(s.test_brackets, test);
  EXPECT_EQ(s.crossing, crossing);
  EXPECT_EQ(s.words, words);
  EXPECT_EQ(s.correct_tags, tags);
}

const std::string kDog = "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))";

TEST(EvalbSentence, CountsConstituentsButNotRootNorPreterminals) {
  // S, NP, VP: 3 brackets. TOP is a DELETE_LABEL; the preterminals are words, not brackets; the
  // period is deleted, so 3 words are scored, but the length (for the cut-off) counts it: 4.
  const EvalbSentence s = score(kDog, kDog);
  expect_counts(s, 3, 3, 3, 0, 3, 3);
  EXPECT_EQ(s.length, 4);
  EXPECT_DOUBLE_EQ(s.recall(), 100.0);
  EXPECT_DOUBLE_EQ(s.precision(), 100.0);
}

TEST(EvalbSentence, RootBracketIsNotCountedWhateverItsLabel) {
  // TOP, ROOT, an unlabelled outer bracket or none: always S, NP, VP. (Deliberate difference:
  // EVALB with COLLINS.prm counts ROOT and the unlabelled bracket, 4 test brackets here, precision
  // 75.00; it drops only TOP.)
  for (const std::string test : {
           "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))",
           "( (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))",
           "(S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .))",
           "(TOP-1 (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))",
       }) {
    SCOPED_TRACE(test);
    expect_counts(score(kDog, test), 3, 3, 3, 0, 3, 3);
    expect_counts(score(test, kDog), 3, 3, 3, 0, 3, 3);
  }
}

TEST(EvalbSentence, PunctuationIsDeletedSoItsAttachmentDoesNotMatter) {
  // Every COLLINS.prm punctuation tag (`` , : '' .) is deleted with its word, in each tree, before
  // spans are taken: the test's NP [The dog] and VP [barked ; loudly] take in quotes and commas
  // yet span the gold's words 0-2 and 2-4. S, NP, VP, ADVP all match: 4/4; 4 words of 9.
  const EvalbSentence s = score(
      "(TOP (S (`` ``) (NP (DT The) (NN dog)) (, ,) (VP (VBD barked) (: ;) (ADVP (RB loudly))) "
      "('' '') (. .)))",
      "(TOP (S (NP (`` ``) (DT The) (NN dog) (, ,)) (VP (VBD barked) (: ;) (ADVP (RB loudly)) "
      "('' '')) (. .)))");
  expect_counts(s, 4, 4, 4, 0, 4, 4);
  EXPECT_EQ(s.length, 9);
  // Deletion goes by the tag: "?" tagged "." is deleted like ".", wherever it hangs.
  expect_counts(score("(TOP (S (NP (PRP He)) (VP (VBD left)) (. ?)))",
                      "(TOP (S (NP (PRP He)) (VP (VBD left) (. ?))))"),
                3, 3, 3, 0, 2, 2);
}

TEST(EvalbSentence, BracketOverDeletedWordsOnlyIsNotCounted) {
  // The test's PRN holds only the period: it covers no scored word ("zero element") and is not
  // counted. Gold S NP VP NP, test the same: 4/4/4.
  expect_counts(score("(TOP (S (NP (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. "
                      ".)))",
                      "(TOP (S (NP (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti)) (PRN "
                      "(. .)))))"),
                4, 4, 4, 0, 4, 4);
}

TEST(EvalbSentence, DeletedWordsAreNotCompared) {
  // Gold "." and test "!" are both tagged "." and deleted before the words are compared.
  EXPECT_EQ(score("(TOP (S (NP (DT A) (NN cat)) (VP (VBD sat)) (. .)))",
                  "(TOP (S (NP (DT A) (NN cat)) (VP (VBD sat)) (. !)))")
                .status,
            EvalbStatus::kScored);
}

TEST(EvalbSentence, OtherTagsAreWordsParenthesesIncluded) {
  // -LRB- and -RRB- are not in COLLINS.prm: x ( y ) z are 5 scored words (length 6 with "!").
  // Gold: S[0,5) NP[0,4) PRN[1,4) VP[4,5) = 4; test: S[0,5) NP[0,3) VP[3,5) = 3; only S matches:
  // recall 1/4 = 25.00, precision 1/3 = 33.33. Crossing: test NP[0,3) crosses gold PRN[1,4), test
  // VP[3,5) crosses gold NP[0,4): 2. EVALB: "2 6 0 25.00 33.33 1 4 3 2 5 5 100.00".
  const EvalbSentence s =
      score("(TOP (S (NP (NN x) (PRN (-LRB- -LRB-) (NN y) (-RRB- -RRB-))) (VP (VBD z)) (. !)))",
            "(TOP (S (NP (NN x) (-LRB- -LRB-) (NN y)) (VP (-RRB- -RRB-) (VBD z)) (. !)))");
  expect_counts(s, 1, 4, 3, 2, 5, 5);
  EXPECT_EQ(s.length, 6);
  EXPECT_NEAR(s.recall(), 25.0, 1e-12);
  EXPECT_NEAR(s.precision(), 100.0 / 3.0, 1e-12);
}

TEST(EvalbSentence, FunctionTagsAndIndicesAreStripped) {
  // S-1, NP-SBJ-2, PP-LOC=3, NP-TMP, ADVP-MNR become S, NP, PP, NP, ADVP; with VP and PRT that is
  // 7 gold brackets, all matched by the plain labels (PRT~ADVP both ways, next test).
  expect_counts(score("(TOP (S-1 (NP-SBJ-2 (PRP He)) (VP (VBD gave) (PRT (RP up)) (PP-LOC=3 (IN "
                      "in) (NP-TMP (NN time)))) (ADVP-MNR (RB quietly))))",
                      "(TOP (S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up)) (PP (IN in) (NP (NN "
                      "time)))) (PRT (RB quietly))))"),
                7, 7, 7, 0, 6, 6);
}

TEST(EvalbSentence, AdvpAndPrtAreEquivalentOtherLabelsAreNot) {
  const std::string gold = "(TOP (S (NP (PRP She)) (VP (VBD looked) (ADVP (RB up)))))";
  // S NP VP ADVP against S NP VP PRT: 4/4.
  expect_counts(score(gold, "(TOP (S (NP (PRP She)) (VP (VBD looked) (PRT (RB up)))))"), 4, 4, 4, 0,
                3, 3);
  // ...against S NP VP ADJP: 3/4.
  expect_counts(score(gold, "(TOP (S (NP (PRP She)) (VP (VBD looked) (ADJP (RB up)))))"), 3, 4, 4,
                0, 3, 3);
}

TEST(EvalbLabel, CutsAtTheFirstHyphenOrEqualsSign) {
  EXPECT_EQ(evalb_label("NP-SBJ-1"), "NP");
  EXPECT_EQ(evalb_label("PP-LOC=2"), "PP");
  EXPECT_EQ(evalb_label("S=3"), "S");
  EXPECT_EQ(evalb_label("NP"), "NP");
  // Unlike strip_function_tags, a label starting with '-' or '=' is cut to nothing.
  EXPECT_EQ(evalb_label("-NONE-"), "");
  EXPECT_EQ(evalb_label("=Y"), "");
  EXPECT_EQ(strip_function_tags("-NONE-"), "-NONE-");
}

TEST(EvalbSentence, LabelsCutToNothingMatchEachOther) {
  // -X- and -Z- both become "", =Y and = too: S[0,4), ""[0,2), ""[2,3) match; TOP-1 is cut to TOP
  // and deleted, so gold has 3. The test's VP[3,4) is the 4th: 3/3/4, precision 75.00.
  expect_counts(score("(TOP (S (-X- (NN a) (NN b)) (=Y (VB go)) (TOP-1 (VB went))))",
                      "(TOP (S (-Z- (NN a) (NN b)) (= (VB go)) (VP (VB went))))"),
                3, 3, 4, 0, 4, 4);
}

TEST(EvalbSentence, RepeatedSpansCountWithMultiplicity) {
  // Gold NP twice over "the man" (and S, VP): 4; the test has it once: 3 of 4, precision 100.
  expect_counts(score("(TOP (S (NP (NP (DT the) (NN man))) (VP (VB go))))",
                      "(TOP (S (NP (DT the) (NN man)) (VP (VB go))))"),
                3, 4, 3, 0, 3, 3);
  // Test NP three times and VP twice against one each: 3 matched of 6 test brackets (50.00).
  expect_counts(score("(TOP (S (NP (DT the) (NN man)) (VP (VB go))))",
                      "(TOP (S (NP (NP (NP (DT the) (NN man)))) (VP (VP (VB go)))))"),
                3, 3, 6, 0, 3, 3);
  // NP x3 against NP x2 over one word: 2 matched, 3 gold, 2 test.
  expect_counts(score("(TOP (NP (NP (NP (NN x)))))", "(TOP (NP (NP (NN x))))"), 2, 3, 2, 0, 1, 1);
}

TEST(EvalbSentence, UnaryChainsCountEveryLevel) {
  // S and VP over the one word "Go": 2 brackets.
  expect_counts(score("(TOP (S (VP (VB Go))))", "(TOP (S (VP (VB Go))))"), 2, 2, 2, 0, 1, 1);
  // S over VP against VP alone: 1 of 2.
  expect_counts(score("(TOP (S (VP (VB Go))))", "(TOP (VP (VB Go)))"), 1, 2, 1, 0, 1, 1);
}

TEST(EvalbSentence, EmptyElementsAndWhatTheyEmptyAreDeleted) {
  // SBAR over (-NONE- 0) and S over (-NONE- *T*-1) cover no word: gold S, NP, VP = 3. Length 3
  // (Analysts reported .), traces not counted; 2 words scored.
  EvalbSentence s = score(
      "(TOP (S (NP-SBJ-1 (NNS Analysts)) (VP (VBD reported) (SBAR (-NONE- 0) (S (-NONE- "
      "*T*-1)))) (. .)))",
      "(TOP (S (NP (NNS Analysts)) (VP (VBD reported)) (. .)))");
  expect_counts(s, 3, 3, 3, 0, 2, 2);
  EXPECT_EQ(s.length, 3);
  // Empty elements in the test tree go the same way: its NPs over traces are not counted, and
  // ADVP~PRT: S VP ADVP against S VP PRT, 3/3.
  s = score("(TOP (S (NP-SBJ (-NONE- *)) (VP (VB Go) (ADVP (RB now))) (. .)))",
            "(TOP (S (NP (-NONE- *)) (VP (VB Go) (PRT (RB now)) (NP (-NONE- *T*))) (. .)))");
  expect_counts(s, 3, 3, 3, 0, 2, 2);
  EXPECT_EQ(s.length, 3);
}

TEST(EvalbSentence, CrossingCountsTestBracketsThatOverlapAGoldOne) {
  // Gold: S[0,8) NP[0,3) VP[3,8) NP[4,6) PP[6,8) NP[7,8) = 6. Test: S[0,8) NP[0,2) VP[2,8)
  // NP[4,8) NP[4,6) PP[6,8) NP[7,8) = 7. Matched S, NP[4,6), PP, NP[7,8) = 4: recall 66.67,
  // precision 57.14. Only the test VP[2,8) crosses a gold bracket (NP[0,3)): 1.
  const EvalbSentence s = score(
      "(TOP (S (NP (DT the) (JJ big) (NN dog)) (VP (VBD saw) (NP (DT a) (NN cat)) (PP (IN with) "
      "(NP (NNS eyes))))))",
      "(TOP (S (NP (DT the) (JJ big)) (VP (NN dog) (VBD saw) (NP (NP (DT a) (NN cat)) (PP (IN "
      "with) (NP (NNS eyes)))))))");
  expect_counts(s, 4, 6, 7, 1, 8, 8);
}

TEST(EvalbSentence, TagAccuracyComparesRawTagsOfScoredWords) {
  // NNS against NN is wrong; the tags ADVP and PRT are equivalent as labels are: 2 of 3.
  const EvalbSentence s = score("(TOP (S (NP (NN x)) (VP (ADVP up) (NNS ys))))",
                                "(TOP (S (NP (NN x)) (VP (PRT up) (NN ys))))");
  expect_counts(s, 3, 3, 3, 0, 3, 2);
  EXPECT_NEAR(s.tagging_accuracy(), 200.0 / 3.0, 1e-12);
}

TEST(EvalbSentence, DifferentWordsAreAnError) {
  EvalbSentence s = score(kDog, "(TOP (S (NP (DT The) (NN cat)) (VP (VBD barked)) (. .)))");
  EXPECT_EQ(s.status, EvalbStatus::kError);
  EXPECT_EQ(s.problem, "word mismatch: word 2 is 'dog' in gold but 'cat' in test");
  EXPECT_EQ(s.length, 4);  // the gold's, reported even for errors
  EXPECT_EQ(s.matched + s.gold_brackets + s.test_brackets + s.words + s.correct_tags, 0);
  EXPECT_FALSE(s.punctuation_tags_differ);

  s = score(kDog, "(TOP (S (NP (DT The)) (VP (VBD barked)) (. .)))");
  EXPECT_EQ(s.status, EvalbStatus::kError);
  EXPECT_TRUE(s.problem.starts_with("length mismatch (3 words to score in gold, 2 in test"))
      << s.problem;
  EXPECT_NE(s.problem.find("word 2 is 'dog' in gold but 'barked' in test"), std::string::npos)
      << s.problem;
}

TEST(EvalbSentence, TestTreeWithNoWordToScoreIsSkipped) {
  // Only a period: nothing left once it is deleted. EVALB's status 2.
  const EvalbSentence s = score("(TOP (S (NP (DT A) (NN cat)) (VP (VBD sat))))", "(TOP (. .))");
  EXPECT_EQ(s.status, EvalbStatus::kSkipped);
  EXPECT_EQ(s.length, 3);
  EXPECT_FALSE(s.problem.empty());
}

TEST(EvalbSentence, PunctuationIsDeletedByEachTreesOwnTags) {
  // A period tagged NN stays a word in the test tree while the gold deletes it: 3 words against
  // 4, an error in EVALB ("Length unmatch (3|4)").
  EvalbSentence s = score(kDog, "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (NN .)))");
  EXPECT_EQ(s.status, EvalbStatus::kError);
  EXPECT_TRUE(s.punctuation_tags_differ);
  EXPECT_NE(s.problem.find("word 4 '.' is punctuation by its gold tag '.' but not by its test tag "
                           "'NN'"),
            std::string::npos)
      << s.problem;
  // A test tag that makes a word punctuation deletes it: ':' on "so" against the gold's NN, and
  // the comma tagged NN kept: as many words, misaligned. EVALB: "Words unmatch (barked|,)".
  s = score("(TOP (S (NP (DT the) (NN dog)) (, ,) (VP (VBD barked) (NP (NN so)))))",
            "(TOP (S (NP (DT the) (NN dog)) (NN ,) (VP (VBD barked) (NP (: so)))))");
  EXPECT_EQ(s.status, EvalbStatus::kError);
  EXPECT_TRUE(s.problem.starts_with("word mismatch: word 3 ',' is punctuation by its gold tag"))
      << s.problem;
}

TEST(EvalbSentence, PlaceholderTagsAreWordsAsInEvalb) {
  // XX on every word (a parser that predicts no tags): XX is no DELETE_LABEL, so EVALB keeps the
  // period as a word where the gold deletes it: 3 words to score in gold, 4 in test, a length
  // mismatch ("Length unmatch (3|4)"), as EVALB reports it.
  const EvalbSentence s = score(kDog, "(TOP (S (NP (XX The) (XX dog)) (VP (XX barked)) (XX .)))");
  EXPECT_EQ(s.status, EvalbStatus::kError);
  EXPECT_TRUE(s.punctuation_tags_differ);
  EXPECT_TRUE(s.problem.starts_with("length mismatch (3 words to score in gold, 4 in test"))
      << s.problem;
  // Without punctuation the words align and the brackets are scored; every XX tag is wrong.
  expect_counts(score("(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked))))",
                      "(TOP (S (NP (XX The) (XX dog)) (VP (XX barked))))"),
                3, 3, 3, 0, 3, 0);
  // The same tree with real tags, the period's included, scores 3 of 3 brackets and 3 tags.
  expect_counts(score(kDog, "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))"), 3, 3, 3, 0,
                3, 3);
}

TEST(EvalbSentence, GoldTagsOptionGivesTheTestWordsTheGoldTags) {
  // Not EVALB: an XX tree retagged with the gold's tags scores 3/3/3 with every tag right
  // (EVALB gives the same on the retagged tree).
  EvalbOptions options;
  options.gold_tags = true;
  expect_counts(score(kDog, "(TOP (S (NP (XX The) (XX dog)) (VP (XX barked)) (XX .)))", options), 3,
                3, 3, 0, 3, 3);
  // Empty elements are left out of the alignment on both sides.
  expect_counts(score("(TOP (S (NP (-NONE- *)) (VP (VB Go)) (. .)))",
                      "(TOP (S (VP (XX Go)) (XX .)))", options),
                2, 2, 2, 0, 1, 1);
  // Different numbers of words: nothing to copy, the error stays.
  EXPECT_EQ(score(kDog, "(TOP (S (NP (XX dog)) (VP (XX barked)) (XX .)))", options).status,
            EvalbStatus::kError);
}

TEST(Evalb, TotalsSumCountsAndLeaveOutErrorsAndSkips) {
  const std::vector<Tree> gold = read_trees(
      "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
      "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))\n"
      "(TOP (S (NP (DT A) (NN cat)) (VP (VBD sat))))\n"
      "(TOP (S (NP (NP (DT the) (NN man))) (VP (VB go))))\n"
      "(TOP (S (NP (DT the) (NN man)) (VP (VB go))))\n",
      "gold");
  const std::vector<Tree> test = read_trees(
      "(TOP (S (NP (DT The) (NN cat)) (VP (VBD barked)) (. .)))\n"       // word mismatch: error
      "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))\n"          // 3/3/3
      "(TOP (. .))\n"                                                    // skipped
      "(TOP (S (NP (DT the) (NN man)) (VP (VB go))))\n"                  // 3 of 4 gold
      "(TOP (S (NP (NP (NP (DT the) (NN man)))) (VP (VP (VB go)))))\n",  // 3 of 6 test
      "test");
  const EvalbResult r = evalb(gold, test);
  ASSERT_EQ(r.sentences.size(), 5u);
  EXPECT_EQ(r.sentences[0].id, 1);
  EXPECT_EQ(r.sentences[4].id, 5);
  const EvalbTotals& t = r.all;
  EXPECT_EQ(t.sentences, 5);
  EXPECT_EQ(t.errors, 1);
  EXPECT_EQ(t.skipped, 1);
  EXPECT_EQ(t.scored(), 3);
  // Sums over the 3 scored sentences: matched 3+3+3 = 9, gold 3+4+3 = 10, test 3+3+6 = 12.
  // Recall 90.00, precision 75.00, F1 2*90*75/165 = 81.82 (not the mean of the sentences' F1s).
  EXPECT_EQ(t.matched, 9);
  EXPECT_EQ(t.gold_brackets, 10);
  EXPECT_EQ(t.test_brackets, 12);
  EXPECT_NEAR(t.recall(), 90.0, 1e-12);
  EXPECT_NEAR(t.precision(), 75.0, 1e-12);
  EXPECT_NEAR(t.f1(), 2 * 90.0 * 75.0 / 165.0, 1e-12);
  // Complete match: only sentence 2 has matched == gold == test: 1 of 3 scored = 33.33.
  EXPECT_EQ(t.complete_matches, 1);
  EXPECT_NEAR(t.complete_match(), 100.0 / 3.0, 1e-12);
  // Words 3 + 3 + 3, all tags right.
  EXPECT_EQ(t.words, 9);
  EXPECT_DOUBLE_EQ(t.tagging_accuracy(), 100.0);
  EXPECT_EQ(format_evalb_sentence(r.sentences[0]),
            "   1    4    1    0.00   0.00     0      0    0      0      0     0     0.00");
  EXPECT_EQ(format_evalb_sentence(r.sentences[4]),
            "   5    3    0  100.00  50.00     3      3    6      0      3     3   100.00");
}

TEST(Evalb, SentencesWithoutBracketsAreCompleteMatchesAndF1OfNothingIsZero) {
  // (INTJ Yes) against a bare tag: gold 1, test 0; a bare "Yes." against (FRAG Yes .): 0 and 1;
  // bare against bare: 0 = 0 = 0, a complete match. Recall 0/1, precision 0/1, complete 1/3.
  // EVALB prints F1 "-nan" here (0/0); we print 0.
  const EvalbResult r =
      evalb(read_trees("(TOP (INTJ (UH Yes)))\n(TOP (UH Yes) (. .))\n(TOP (NN Yes))", "gold"),
            read_trees("(TOP (UH Yes))\n(TOP (FRAG (UH Yes) (. .)))\n(TOP (NN Yes))", "test"));
  EXPECT_EQ(r.all.gold_brackets, 1);
  EXPECT_EQ(r.all.test_brackets, 1);
  EXPECT_EQ(r.all.matched, 0);
  EXPECT_EQ(r.all.complete_matches, 1);
  EXPECT_DOUBLE_EQ(r.all.f1(), 0.0);
  EXPECT_NEAR(r.all.complete_match(), 100.0 / 3.0, 1e-12);
}

TEST(Evalb, CutoffLengthCountsPunctuationButNotEmptyElements) {
  // 40 words w0..w39 under S (NP w0..w19) (VP w20..w39):
  //   1. with a period: length 41, above the cut-off of 40; test says ADJP for VP: 2 of 3.
  //   2. with 3 traces: length 40, kept; 3/3/3.
  std::string np, vp;
  for (int i = 0; i < 20; ++i) np += " (NN w" + std::to_string(i) + ")";
  for (int i = 20; i < 40; ++i) vp += " (VB w" + std::to_string(i) + ")";
  const std::string one = "(TOP (S (NP" + np + ") (VP" + vp + " (. .))))";
  const std::string two = "(TOP (S (NP" + np + ") (VP" + vp + " (-NONE- *) (-NONE- *T*-1))))";
  std::string one_test = one;
  one_test.replace(one_test.find("(VP"), 3, "(ADJP");
  const EvalbResult r =
      evalb(read_trees(one + "\n" + two, "gold"),
            read_trees(one_test + "\n(TOP (S (NP" + np + ") (VP" + vp + ")))", "test"));
  EXPECT_EQ(r.sentences[0].length, 41);
  EXPECT_EQ(r.sentences[1].length, 40);
  EXPECT_EQ(r.all.sentences, 2);
  EXPECT_EQ(r.all.matched, 5);  // all: 5 of 6, recall 83.33
  EXPECT_EQ(r.up_to_cutoff.sentences, 1);
  EXPECT_EQ(r.up_to_cutoff.matched, 3);
  EXPECT_EQ(r.up_to_cutoff.gold_brackets, 3);
  EvalbOptions options;
  options.cutoff_length = 41;
  EXPECT_EQ(
      evalb(read_trees(one, "gold"), read_trees(one_test, "test"), options).up_to_cutoff.sentences,
      1);
}

TEST(Evalb, DifferentNumbersOfTreesAreAnError) {
  EXPECT_THROW(evalb(read_trees(kDog + kDog, "gold"), read_trees(kDog, "test")), Error);
}

}  // namespace
}  // namespace transduce::parse
