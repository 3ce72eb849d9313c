// The tagged parser's lexicon: the tags each word may take, worked out by hand on small treebanks,
// and its parse.json form read back.
#include "parse/tag_lexicon.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "parse/tree.h"
#include "support/error_of.h"

namespace transduce::parse {
namespace {

using Tags = std::vector<std::string>;

// `n` copies of `line`'s trees, normalised.
std::vector<Tree> trees_of(const std::string& text, int n = 1) {
  std::vector<Tree> out;
  for (int i = 0; i < n; ++i)
    for (const Tree& t : read_trees(text, "t")) out.push_back(normalise(t));
  return out;
}

TEST(TagLexicon, WordsTakeTheirTagsAndRareOrUnseenOnesTheOpenClass) {
  // "dog" 10 times NN (not rare), "barked" 10 times VBD, "the" 10 times DT, "," 10 times ",";
  // "runs" once as VBZ (rare), and NN/VBD/VBZ made open-class by ten distinct words each below.
  std::string text;
  for (int i = 0; i < 10; ++i) text += "(S (NP (DT the) (NN dog)) (, ,) (VP (VBD barked)))\n";
  text += "(S (NP (NN cat)) (VP (VBZ runs)))\n";
  for (int i = 0; i < 10; ++i)
    text += "(S (NP (NN n" + std::to_string(i) + ")) (VP (VBD v" + std::to_string(i) + ") (VBZ z" +
            std::to_string(i) + ")))\n";
  const TagLexicon lexicon = tag_lexicon(trees_of(text));
  const Tags open = {"NN", "VBD", "VBZ"};
  EXPECT_EQ(lexicon.open_class, open);
  EXPECT_EQ(lexicon.symbol_class, Tags{","});
  EXPECT_EQ(lexicon.tags_of("dog"), Tags{"NN"});
  EXPECT_EQ(lexicon.tags_of("the"), Tags{"DT"});
  EXPECT_EQ(lexicon.tags_of(","), Tags{","});
  EXPECT_EQ(lexicon.tags_of("runs"), open);    // once as VBZ: VBZ and the open class
  EXPECT_EQ(lexicon.tags_of("zebra"), open);   // never seen
  EXPECT_EQ(lexicon.tags_of(";"), Tags{","});  // never seen, no letter or digit
  EXPECT_EQ(lexicon.tags_of("n1"), open);      // a digit: a word
  EXPECT_EQ(lexicon.words.at("dog").at("NN"), 10);
}

TEST(TagLexicon, SymbolWordsHaveNoLetterOrDigit) {
  EXPECT_TRUE(symbol_word(","));
  EXPECT_TRUE(symbol_word("--"));
  EXPECT_TRUE(symbol_word("``"));
  EXPECT_FALSE(symbol_word("-LRB-"));
  EXPECT_FALSE(symbol_word("3"));
  EXPECT_FALSE(symbol_word("\xC3\xA9"));  // é
}

TEST(TagLexicon, ReadsBackWhatItWrites) {
  const TagLexicon lexicon = tag_lexicon(trees_of(
      "(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))\n(S (NP (PRP It)) (VP (VBZ is)))", 3));
  const nlohmann::json j = tag_lexicon_json(lexicon);
  const TagLexicon back = tag_lexicon_from_json(j, "parse.json");
  EXPECT_EQ(back.words, lexicon.words);
  EXPECT_EQ(back.open_class, lexicon.open_class);
  EXPECT_EQ(back.symbol_class, lexicon.symbol_class);
  EXPECT_EQ(back.rare_below, TagLexicon::kRareBelow);
  EXPECT_EQ(back.words.at("dog").at("NN"), 3);
  nlohmann::json bad = j;
  bad["words"]["dog"] = "NN";
  EXPECT_TRUE(testing::error_of([&] {
                tag_lexicon_from_json(bad, "parse.json");
              }).starts_with("parse.json: \"tag_lexicon\" is not a lexicon ("));
  bad = j;
  bad["rare_below"] = -1;
  EXPECT_EQ(testing::error_of([&] { tag_lexicon_from_json(bad, "parse.json"); }),
            "parse.json: \"tag_lexicon\" has a negative rare_below -1");
}

}  // namespace
}  // namespace transduce::parse
