// A parser's training-data augmentation: constituents as sentences of their own (--subtrees) and
// copies with open-class words swapped for others of the same tag (--word-swaps).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "parse/tree.h"
#include "parse/tree_data.h"
#include "parse/word_swap.h"

namespace transduce::parse {
namespace {

std::vector<Tree> normalised(const std::string& text) {
  std::vector<Tree> trees = read_trees(text, "t.mrg");
  for (Tree& t : trees) t = normalise(t);
  return trees;
}

std::vector<std::string> strings(const std::vector<Tree>& trees) {
  std::vector<std::string> out;
  for (const Tree& t : trees) out.push_back(to_string(t));
  return out;
}

// Labels and shape, with every word blanked: what a word swap must leave alone.
void blank_words(Tree& t) {
  t.word.clear();
  for (Tree& c : t.children) blank_words(c);
}
std::string skeleton(Tree t) {
  blank_words(t);
  return to_string(t);
}

TEST(TreeAugmentation, SubtreesAreEveryConstituentOfTwoOrMoreWordsBelowTheSentence) {
  const std::vector<Tree> trees = normalised(
      "( (S (NP (DT the) (NN dog)) (VP (VBZ barks) (ADVP (RB loudly)) (PP (IN at) (NP (NN "
      "night)))) "
      "(. .)))\n"
      "( (NP (NN x)))\n");
  EXPECT_EQ(strings(subtrees(trees)),
            (std::vector<std::string>{
                "(TOP (NP (DT the) (NN dog)))",
                "(TOP (VP (VBZ barks) (ADVP (RB loudly)) (PP (IN at) (NP (NN night)))))",
                "(TOP (PP (IN at) (NP (NN night))))",
            }));
}

// A treebank where NN has 12 distinct words in 12 uses (open), VB 10 in 10 (open), DT 2 words in
// many uses (closed), JJ 9 distinct words (closed: fewer than 10), and IN 10 distinct words in
// 600 uses (closed: under 2%).
std::vector<Tree> toy_treebank() {
  std::string text;
  const std::vector<std::string> dts{"the", "a"};
  for (int i = 0; i < 12; ++i)
    text += "( (S (NP (DT " + dts[i % 2] + ") (NN noun" + std::to_string(i) + ")) (VP (VB verb" +
            std::to_string(i % 10) + ") (ADJP (JJ adj" + std::to_string(i % 9) + ")))))\n";
  for (int i = 0; i < 600; ++i)
    text += "( (PP (IN prep" + std::to_string(i % 10) + ") (NP (DT the) (NN noun0))))\n";
  return normalised(text);
}

TEST(TreeAugmentation, OpenClassTagsHaveManyDistinctWordsForTheirUses) {
  std::vector<Tree> trees = toy_treebank();
  // NN: 12 + 600 uses of 12 words is under 2%; without the PP trees it is open.
  EXPECT_EQ(open_class_tags(trees), (std::set<std::string>{"VB"}));
  trees.resize(12);
  EXPECT_EQ(open_class_tags(trees), (std::set<std::string>{"NN", "VB"}));
}

TEST(TreeAugmentation, WordSwapsKeepTheTreeAndDrawOnlyWordsOfTheSameTag) {
  std::vector<Tree> trees = toy_treebank();
  trees.resize(12);
  std::map<std::string, std::set<std::string>> words_of;
  for (const Tree& t : trees) {
    const std::vector<std::string> tags = t.tags(), words = t.words();
    for (size_t k = 0; k < tags.size(); ++k) words_of[tags[k]].insert(words[k]);
  }

  EXPECT_EQ(strings(word_swapped_copies(trees, 2, 0.0, 7)), [&] {
    std::vector<std::string> twice = strings(trees);
    const std::vector<std::string> once = twice;
    twice.insert(twice.end(), once.begin(), once.end());
    return twice;
  }());

  const std::vector<Tree> swapped = word_swapped_copies(trees, 3, 1.0, 7);
  ASSERT_EQ(swapped.size(), 36u);
  int changed = 0, open_words = 0;
  for (size_t i = 0; i < swapped.size(); ++i) {
    const Tree& original = trees[i % trees.size()];
    EXPECT_EQ(skeleton(swapped[i]), skeleton(original));
    const std::vector<std::string> tags = original.tags(), before = original.words(),
                                   after = swapped[i].words();
    ASSERT_EQ(after.size(), before.size());
    for (size_t k = 0; k < before.size(); ++k) {
      if (tags[k] == "NN" || tags[k] == "VB") {
        ++open_words;
        EXPECT_TRUE(words_of[tags[k]].count(after[k])) << tags[k] << " " << after[k];
        changed += after[k] != before[k];
      } else {
        EXPECT_EQ(after[k], before[k]) << "closed tag " << tags[k];
      }
    }
  }
  // At rate 1 every open-class word is redrawn; it stays the same only when drawn again (1 in
  // 10-12): at least 80% must differ.
  EXPECT_EQ(open_words, 72);
  EXPECT_GE(changed, 58);

  EXPECT_EQ(strings(word_swapped_copies(trees, 3, 1.0, 7)), strings(swapped));
  EXPECT_NE(strings(word_swapped_copies(trees, 3, 1.0, 8)), strings(swapped));
}

TEST(TreeAugmentation, WordSwapsDrawDistinctWordsUniformlyAtTheGivenRate) {
  // One open tag whose first word makes up most uses: drawn uniformly over the 70 distinct words,
  // it comes back about 1 in 70 times, not 81 in 200.
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "( (NP (NN " + (i < 81 ? std::string("common") : "rare" + std::to_string(i - 81)) +
            ") (NN tail" + std::to_string(i % 50) + ")))\n";
  const std::vector<Tree> trees = normalised(text);
  ASSERT_EQ(open_class_tags(trees), (std::set<std::string>{"NN"}));
  const int copies = 50;
  const std::vector<Tree> swapped = word_swapped_copies(trees, copies, 0.3, 3);
  int64_t first_changed = 0, drawn_common = 0;
  for (size_t i = 0; i < swapped.size(); ++i) {
    const std::string before = trees[i % trees.size()].children[0].children[0].word;
    const std::string after = swapped[i].children[0].children[0].word;
    first_changed += after != before;
    drawn_common += before != "common" && after == "common";
  }
  // 5,000 first words at rate 0.3, of which 1 in 70 draw the same word again (the tag has 70
  // distinct words): about 1,479 change (standard deviation 32).
  EXPECT_NEAR(static_cast<double>(first_changed), 1479, 160);
  // Of the 950 rare first words, 285 are redrawn, 1 in 70 as "common": about 4. Drawn by
  // frequency ("common" is 81 of the tag's 200 uses) it would be about 115.
  EXPECT_LE(drawn_common, 14);
}

}  // namespace
}  // namespace transduce::parse
