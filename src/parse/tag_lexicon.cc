#include "parse/tag_lexicon.h"

#include <cctype>
#include <set>

#include "core/error.h"
#include "parse/tree_vocab.h"
#include "parse/word_swap.h"

namespace transduce::parse {

namespace {

void count_tags(const Tree& t, TagLexicon& lexicon) {
  if (t.preterminal()) {
    ++lexicon.words[escape_word(t.word)][t.label];
    return;
  }
  for (const Tree& c : t.children) count_tags(c, lexicon);
}

}  // namespace

bool symbol_word(const std::string& word) {
  for (unsigned char c : word)
    if (std::isalnum(c) || c >= 0x80) return false;
  return true;
}

std::vector<std::string> TagLexicon::tags_of(const std::string& word) const {
  const auto found = words.find(word);
  if (found == words.end()) {
    const std::vector<std::string>& unseen = symbol_word(word) ? symbol_class : open_class;
    const std::set<std::string> sorted(unseen.begin(), unseen.end());
    return {sorted.begin(), sorted.end()};
  }
  std::set<std::string> tags;
  int64_t seen = 0;
  for (const auto& [tag, count] : found->second) {
    tags.insert(tag);
    seen += count;
  }
  if (seen < rare_below) tags.insert(open_class.begin(), open_class.end());
  return {tags.begin(), tags.end()};
}

TagLexicon tag_lexicon(const std::vector<Tree>& trees) {
  TagLexicon lexicon;
  for (const Tree& t : trees) count_tags(t, lexicon);
  const std::set<std::string> open = open_class_tags(trees);
  lexicon.open_class.assign(open.begin(), open.end());
  std::set<std::string> symbols;
  for (const auto& [word, tags] : lexicon.words)
    if (symbol_word(word))
      for (const auto& [tag, count] : tags) symbols.insert(tag);
  lexicon.symbol_class.assign(symbols.begin(), symbols.end());
  return lexicon;
}

nlohmann::json tag_lexicon_json(const TagLexicon& lexicon) {
  return {{"rare_below", lexicon.rare_below},
          {"open_class", lexicon.open_class},
          {"symbol_class", lexicon.symbol_class},
          {"words", lexicon.words}};
}

TagLexicon tag_lexicon_from_json(const nlohmann::json& j, const std::string& path) {
  TagLexicon lexicon;
  try {
    lexicon.rare_below = j.at("rare_below").get<int64_t>();
    lexicon.open_class = j.at("open_class").get<std::vector<std::string>>();
    lexicon.symbol_class = j.at("symbol_class").get<std::vector<std::string>>();
    lexicon.words = j.at("words").get<std::map<std::string, std::map<std::string, int64_t>>>();
  } catch (const nlohmann::json::exception& e) {
    fail("{}: \"tag_lexicon\" is not a lexicon ({})", path, e.what());
  }
  if (lexicon.rare_below < 0)
    fail("{}: \"tag_lexicon\" has a negative rare_below {}", path, lexicon.rare_below);
  return lexicon;
}

}  // namespace transduce::parse
