// The tags a parser of the tagged scheme may give each word: those the training trees give it; for
// a word they give rarely, the open-class tags too (nouns, verbs, adjectives...; see word_swap.h);
// for a word they never give, the open-class tags, or, when it has no letter or digit, the tags
// they give such words (punctuation, `$`, `#`...). Parsers with a lexicon (Collins, Berkeley)
// decode so; here it keeps a half-trained parser from tagging `,` as a noun or a new word as
// punctuation, which would also change what EVALB deletes as punctuation and make the sentence a
// length mismatch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parse/tree.h"

namespace transduce::parse {

struct TagLexicon {
  // Words seen fewer times than this in the training trees may also take the open-class tags.
  static constexpr int64_t kRareBelow = 10;

  // How often the training trees give each word (as the parser reads it: escape_word) each tag.
  std::map<std::string, std::map<std::string, int64_t>> words;
  // The training trees' open-class tags (open_class_tags in word_swap.h).
  std::vector<std::string> open_class;
  // The tags the training trees give words without a letter or a digit.
  std::vector<std::string> symbol_class;
  int64_t rare_below = kRareBelow;

  bool empty() const { return words.empty(); }
  // The tags `word` (escaped) may take, in increasing order.
  std::vector<std::string> tags_of(const std::string& word) const;
};

// The lexicon of normalised training trees.
TagLexicon tag_lexicon(const std::vector<Tree>& trees);

// Whether a word has no letter and no digit (ASCII; other bytes count as letters).
bool symbol_word(const std::string& word);

// As parse.json keeps it: {"rare_below": 10, "open_class": [...], "symbol_class": [...],
// "words": {"the": {"DT": 3}}}.
nlohmann::json tag_lexicon_json(const TagLexicon& lexicon);
// Errors name `path`.
TagLexicon tag_lexicon_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace transduce::parse
