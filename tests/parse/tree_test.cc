// Reading Penn Treebank trees with their usual mess, normalising them as parsers do, and the
// one-line errors for broken input.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "parse/tree.h"
#include "parse/tree_data.h"
#include "support/shared_data.h"
#include "text/corpus.h"

namespace transduce::parse {
namespace {

Tree one(const std::string& text) {
  std::vector<Tree> trees = read_trees(text, "t.mrg");
  EXPECT_EQ(trees.size(), 1u);
  return trees.at(0);
}

std::string normalised(const std::string& text) {
  return to_string(normalise(one(text)));
}

std::string error_of(const std::string& text) {
  try {
    read_trees(text, "t.mrg");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Tree, ReadsOneTreeALineAndTreesSpreadOverLines) {
  const std::string text =
      "( (S (NP-SBJ (NNP Ms.) (NNP Haag))\n"
      "     (VP (VBZ plays)\n"
      "         (NP (NNP Elianti)))\n"
      "     (. .)) )\n"
      "\n"
      "((S (NP (PRP It)) (VP (VBZ works)) (. .)))  ((FRAG (NN Yes) (. .)))\n";
  const std::vector<Tree> trees = read_trees(text, "wsj_0001.mrg");
  ASSERT_EQ(trees.size(), 3u);
  EXPECT_EQ(trees[0].words(), (std::vector<std::string>{"Ms.", "Haag", "plays", "Elianti", "."}));
  EXPECT_EQ(trees[0].tags(), (std::vector<std::string>{"NNP", "NNP", "VBZ", "NNP", "."}));
  EXPECT_EQ(trees[0].label, "");
  EXPECT_EQ(trees[0].children[0].children[1].line, 2);  // the VP opens on line 2
  EXPECT_EQ(trees[1].line, 6);
  EXPECT_EQ(trees[2].line, 6);
  EXPECT_EQ(to_string(trees[2]), "( (FRAG (NN Yes) (. .)))");
  EXPECT_EQ(to_string(trees[0]),
            "( (S (NP-SBJ (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. .)))");
}

TEST(Tree, PrintedTreesReadBackEqual) {
  const Tree t = one("(TOP (S (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-)) (VP (VB y))))");
  EXPECT_EQ(one(to_string(t)), t);
  EXPECT_FALSE(one("(TOP (S (NP (NN x))))") == one("(TOP (S (NP (NN z))))"));
  EXPECT_FALSE(one("(TOP (S (NP (NN x))))") == one("(TOP (S (VP (NN x))))"));
}

TEST(Tree, StripsFunctionTagsAndIndices) {
  EXPECT_EQ(strip_function_tags("NP-SBJ-1"), "NP");
  EXPECT_EQ(strip_function_tags("PP-LOC=2"), "PP");
  EXPECT_EQ(strip_function_tags("NP=2"), "NP");
  EXPECT_EQ(strip_function_tags("S-TPC-1"), "S");
  EXPECT_EQ(strip_function_tags("ADVP|PRT"), "ADVP|PRT");
  EXPECT_EQ(strip_function_tags("-NONE-"), "-NONE-");
  EXPECT_EQ(strip_function_tags("-LRB-"), "-LRB-");
  EXPECT_EQ(strip_function_tags("NP"), "NP");
}

TEST(Tree, NormalisingDropsEmptyElementsAndWhatTheyLeaveEmpty) {
  // The object NP holds only a trace, and the S holding only that NP's subject trace goes too.
  EXPECT_EQ(normalised("( (S (NP-SBJ-1 (NNP Agnew)) (VP (VBD was) (VP (VBN named) "
                       "(S (NP-SBJ (-NONE- *-1)) (NP-PRD (DT a) (NN director))))) (. .)))"),
            "(TOP (S (NP (NNP Agnew)) (VP (VBD was) (VP (VBN named) (S (NP (DT a) (NN "
            "director))))) (. .)))");
  EXPECT_EQ(normalised("((S (NP-SBJ (-NONE- *)) (VP (VB go) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) "
                       "(. .)))"),
            "(TOP (S (VP (VB go)) (. .)))");
  // Tags are kept as they are, bracket tokens too.
  EXPECT_EQ(normalised("((NP (-LRB- -LRB-) (NN note) (-RRB- -RRB-) (-LCB- -LCB-)))"),
            "(TOP (NP (-LRB- -LRB-) (NN note) (-RRB- -RRB-) (-LCB- -LCB-)))");
}

TEST(Tree, NormalisingMakesOneTopRootWhateverTheTreebankUsed) {
  const std::string want = "(TOP (S (NP (NN it)) (VP (VBZ works))))";
  EXPECT_EQ(normalised("( (S (NP (NN it)) (VP (VBZ works))))"), want);
  EXPECT_EQ(normalised("(TOP (S (NP (NN it)) (VP (VBZ works))))"), want);
  EXPECT_EQ(normalised("(ROOT (S (NP (NN it)) (VP (VBZ works))))"), want);
  EXPECT_EQ(normalised("(S (NP (NN it)) (VP (VBZ works)))"), want);         // no root bracket
  EXPECT_EQ(normalised("(( (S-1 (NP (NN it)) (VP (VBZ works)))))"), want);  // extra brackets
  EXPECT_EQ(normalised("(TOP (ROOT (S (NP (NN it)) (VP (VBZ works)))))"), want);
  // A root over several constituents keeps them all; a lone word gets the root directly.
  EXPECT_EQ(normalised("( (NP (NN it)) (. .))"), "(TOP (NP (NN it)) (. .))");
  EXPECT_EQ(normalised("( (UH Yes))"), "(TOP (UH Yes))");
  // Nothing but empty elements: a root without children.
  EXPECT_TRUE(normalise(one("( (S (-NONE- *)))")).children.empty());
}

TEST(Tree, BadInputIsOneLineWithFileAndLine) {
  EXPECT_EQ(error_of("((S (NP (NN a))\n (VP (VB b))"),
            "t.mrg:1: unbalanced brackets: the bracket opened here is never closed");
  EXPECT_EQ(error_of("((S (NP (NN a))))\n)"),
            "t.mrg:2: unbalanced brackets: a ')' closes no bracket");
  EXPECT_EQ(error_of("((S (NP (NN a)) stray (VP (VB b))))"),
            "t.mrg:1: the word 'stray' stands outside a preterminal (beside constituents in 'S')");
  EXPECT_EQ(error_of("((S\n (NP (NN a))\n (VP (VB b)) late))"),
            "t.mrg:3: the word 'late' stands outside a preterminal (beside constituents in 'S')");
  EXPECT_EQ(error_of("((S (NP early (NN a))))"),
            "t.mrg:1: the word 'early' stands outside a preterminal (beside constituents in 'NP')");
  EXPECT_EQ(error_of("((S (NN a b)))"),
            "t.mrg:1: a preterminal 'NN' with more than one word ('a' and 'b')");
  // A lone atom is a label: a preterminal needs a tag and a word.
  EXPECT_EQ(error_of("((S ( word)))"),
            "t.mrg:1: an empty bracket 'word' with no word or constituent");
  EXPECT_EQ(error_of("((S (NP) (VP (VB b))))"),
            "t.mrg:1: an empty bracket 'NP' with no word or constituent");
  EXPECT_EQ(error_of("\n()"), "t.mrg:2: an empty bracket");
  EXPECT_EQ(error_of("word ((S (NN a)))"), "t.mrg:1: 'word' stands outside any bracket");
  EXPECT_EQ(error_of(""), "t.mrg: no tree in it (empty input)");
  EXPECT_EQ(error_of(" \n\n "), "t.mrg: no tree in it (empty input)");
}

TEST(Tree, FilesAreReadWithTheirName) {
  const std::string path = ::testing::TempDir() + "tree_test_bad.mrg";
  std::ofstream(path) << "((S (NP (NN a))))\n((S (NP (NN a))\n";
  try {
    read_tree_file(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ":2: unbalanced brackets: the bracket opened here is "
                                         "never closed");
  }
  try {
    read_tree_file(path + ".missing");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ".missing: cannot open"), std::string::npos);
  }
}

// Every tree of the Penn Treebank sample reads, and its normalised words are the sample's own
// word files (the sentences without traces), line for line.
TEST(Tree, TheTreebankSampleNormalisesToItsWordFiles) {
  for (const char* split : {"train", "dev", "test"}) {
    const std::vector<Tree> trees = read_normalised_trees(
        testing::shared_data_file(std::string("ptb-sample/") + split + ".trees"));
    const std::vector<std::string> lines =
        read_lines(testing::shared_data_file(std::string("ptb-sample/") + split + ".words"));
    ASSERT_EQ(trees.size(), lines.size()) << split;
    for (size_t i = 0; i < trees.size(); ++i) {
      std::string joined;
      for (const std::string& w : trees[i].words()) joined += (joined.empty() ? "" : " ") + w;
      ASSERT_EQ(joined, lines[i]) << split << " tree " << i + 1;
      EXPECT_EQ(trees[i].label, "TOP");
      // No function tag, no empty element, no empty constituent is left.
      std::vector<const Tree*> todo{&trees[i]};
      while (!todo.empty()) {
        const Tree* t = todo.back();
        todo.pop_back();
        if (t->preterminal()) {
          EXPECT_NE(t->label, "-NONE-");
          continue;
        }
        EXPECT_EQ(t->label, strip_function_tags(t->label)) << split << " tree " << i + 1;
        for (const Tree& c : t->children) todo.push_back(&c);
      }
    }
  }
}

}  // namespace
}  // namespace transduce::parse
