// Parsing with a model of random weights: whatever it emits, constrained decoding gives trees that
// need no repair and free decoding gives repaired ones, always over exactly the input's words.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "decode/loaded_model.h"
#include "parse/evalb.h"
#include "parse/parser.h"
#include "parse/tag_lexicon.h"
#include "parse/tree_data.h"
#include "parse/tree_vocab.h"
#include "support/random_parser.h"
#include "support/shared_data.h"

namespace transduce::parse {
namespace {

class RandomParser : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::RandomParserDir("random_parser");
    loaded_ = new LoadedModel(dir_->model());
  }
  static void TearDownTestSuite() {
    delete loaded_;
    delete dir_;
  }

  // Sentences of 1 to `longest` words from a small word list (brackets included).
  static std::vector<std::vector<std::string>> sentences(int n, int longest, uint64_t seed) {
    const std::vector<std::string> words = {"the",      "stock", "rose",   "(", "sharply", ")", ",",
                                            "analysts", "said",  "Vinken", "$", "35.2",    "."};
    std::mt19937_64 rng(seed);
    std::vector<std::vector<std::string>> out(static_cast<size_t>(n));
    for (auto& s : out) {
      const int length = 1 + static_cast<int>(rng() % static_cast<uint64_t>(longest));
      for (int i = 0; i < length; ++i) s.push_back(words[rng() % words.size()]);
    }
    return out;
  }

  static std::vector<std::string> escaped(const std::vector<std::string>& words) {
    std::vector<std::string> out;
    for (const std::string& w : words) out.push_back(escape_word(w));
    return out;
  }

  static testing::RandomParserDir* dir_;
  static LoadedModel* loaded_;
};
testing::RandomParserDir* RandomParser::dir_ = nullptr;
LoadedModel* RandomParser::loaded_ = nullptr;

TEST_F(RandomParser, ConstrainedOutputsAreTreesOverTheWordsWithoutRepair) {
  for (int beam : {1, 4}) {
    ParseOptions o;
    o.scheme = beam == 1 ? TreeScheme::kWords : TreeScheme::kPlaceholder;
    o.search.beam = beam;
    o.search.alpha = 0.3f;
    o.search.max_len_b = 300;
    Parser parser(loaded_->model(), loaded_->tokenizer(), o);
    SCOPED_TRACE(scheme_name(o.scheme));
    const auto input = sentences(40, 25, static_cast<uint64_t>(beam));
    const std::vector<ParsedSentence> out = parser.parse(input);
    ASSERT_EQ(out.size(), input.size());
    for (size_t i = 0; i < input.size(); ++i) {
      EXPECT_EQ(out[i].tree.words(), escaped(input[i])) << "beam " << beam << " sentence " << i;
      EXPECT_EQ(out[i].repairs.total(), 0) << "beam " << beam << " sentence " << i;
      // The output is exactly the linearisation of the tree it restores to.
      const EncodedWords words = encode_words(loaded_->tokenizer(), input[i]);
      EXPECT_EQ(*parser.vocab().encode(linearize(out[i].tree), o.scheme, words), out[i].tokens);
      const auto back = read_trees(to_string(out[i].tree), "output");
      EXPECT_EQ(back.at(0), out[i].tree);
    }
  }
}

TEST_F(RandomParser, FreeOutputsAreRepairedIntoTreesOverTheWords) {
  ParseOptions o;
  o.search.beam = 3;
  o.search.max_len_a = 1.0f;
  o.search.max_len_b = 20;
  o.constrained = false;
  Parser parser(loaded_->model(), loaded_->tokenizer(), o);
  const auto input = sentences(40, 25, 9);
  const std::vector<ParsedSentence> out = parser.parse(input);
  int64_t repaired = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    EXPECT_EQ(out[i].tree.words(), escaped(input[i])) << "sentence " << i;
    repaired += out[i].repairs.total() > 0;
  }
  EXPECT_GT(repaired, 0);  // random weights emit word pieces and unbalanced brackets
}

TEST_F(RandomParser, ALongSentenceIsCutForTheModelAndKeepsAllItsWords) {
  ParseOptions o;
  o.search.beam = 2;
  Parser parser(loaded_->model(), loaded_->tokenizer(), o);
  std::vector<std::string> words;
  for (int i = 0; i < 200; ++i) words.push_back(i % 2 ? "stock" : "Vinken");  // > 127 pieces
  std::vector<std::string> warnings;
  const auto out = parser.parse({{"the", "stock"}, words}, 7,
                                [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("line 8: 200 words in ", 0), 0u) << warnings[0];
  EXPECT_EQ(out[1].tree.words(), words);
  EXPECT_GT(out[1].repairs.missing_words, 0);
  EXPECT_EQ(out[0].repairs.total(), 0);
}

// A tagged parser gives every word a tag its lexicon allows, so EVALB's rule (each tree's own tags
// decide what is punctuation) finds a length mismatch only in a sentence with a word the lexicon
// lets be punctuation or not. Random weights with any tag for any word tag punctuation as words.
TEST_F(RandomParser, TaggedWordsTakeTheTagsOfTheirLexicon) {
  const auto lexicon =
      std::make_shared<TagLexicon>(tag_lexicon(read_normalised_trees(dir_->trees())));
  // 40 dev sentences whose tagged targets fit the random model's 128 positions.
  std::vector<Tree> dev;
  std::vector<std::vector<std::string>> input;
  for (const Tree& t : read_normalised_trees(testing::shared_data_file("ptb-sample/dev.trees"))) {
    if (t.words().size() > 25 || dev.size() == 40) continue;
    dev.push_back(t);
    input.push_back(t.words());
  }
  const auto either_way = [&](const std::string& word) {
    int deleted = 0;
    const std::vector<std::string> tags = lexicon->tags_of(word);
    for (const std::string& tag : tags) deleted += evalb_deletes_tag(tag);
    return deleted > 0 && deleted < static_cast<int>(tags.size());
  };
  ParseOptions o;
  o.scheme = TreeScheme::kTagged;
  o.search.beam = 2;
  o.search.max_len_b = 300;
  o.tag_lexicon = lexicon;
  const std::vector<ParsedSentence> out =
      Parser(loaded_->model(), loaded_->tokenizer(), o).parse(input);
  int64_t punctuation = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    const std::vector<std::string> words = out[i].tree.words(), tags = out[i].tree.tags();
    ASSERT_EQ(words, escaped(input[i]));
    EXPECT_EQ(out[i].repairs.total(), 0);
    bool ambiguous = false;
    for (size_t w = 0; w < words.size(); ++w) {
      const std::vector<std::string> allowed = lexicon->tags_of(words[w]);
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), tags[w]), allowed.end())
          << words[w] << " tagged " << tags[w];
      ambiguous = ambiguous || either_way(words[w]);
      punctuation += evalb_deletes_tag(tags[w]);
    }
    if (!ambiguous) {
      EXPECT_NE(evalb_sentence(dev[i], out[i].tree).status, EvalbStatus::kError)
          << to_string(out[i].tree);
    }
  }
  EXPECT_GT(punctuation, 40);  // the sentences' commas and periods
  o.tag_lexicon = nullptr;
  const std::vector<ParsedSentence> any =
      Parser(loaded_->model(), loaded_->tokenizer(), o).parse(input);
  int64_t errors = 0;
  for (size_t i = 0; i < dev.size(); ++i)
    errors += evalb_sentence(dev[i], any[i].tree).status == EvalbStatus::kError;
  EXPECT_GT(errors, 20);
}

TEST_F(RandomParser, EmptySentencesGiveEmptyTrees) {
  Parser parser(loaded_->model(), loaded_->tokenizer(), ParseOptions{});
  const auto out = parser.parse({{}, {"the"}});
  EXPECT_TRUE(out[0].tree.children.empty());
  EXPECT_EQ(out[1].tree.words(), std::vector<std::string>{"the"});
}

}  // namespace
}  // namespace transduce::parse
