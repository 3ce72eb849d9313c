#include "parse/word_swap.h"

#include <map>

#include "core/rng.h"

namespace transduce::parse {

namespace {

void count_words(const Tree& t, std::map<std::string, std::map<std::string, int64_t>>& by_tag) {
  if (t.preterminal()) {
    ++by_tag[t.label][t.word];
    return;
  }
  for (const Tree& c : t.children) count_words(c, by_tag);
}

std::map<std::string, std::map<std::string, int64_t>> words_by_tag(const std::vector<Tree>& trees) {
  std::map<std::string, std::map<std::string, int64_t>> by_tag;
  for (const Tree& t : trees)
    for (const Tree& c : t.children) count_words(c, by_tag);
  return by_tag;
}

struct Swapper {
  const std::map<std::string, std::vector<std::string>>& choices;
  double rate;
  SplitMix64 rng;

  void swap(Tree& t) {
    if (!t.preterminal()) {
      for (Tree& c : t.children) swap(c);
      return;
    }
    const auto it = choices.find(t.label);
    if (it == choices.end()) return;
    if (rng.uniform() >= rate) return;
    const std::vector<std::string>& words = it->second;
    t.word = words[static_cast<size_t>(rng.randint(0, static_cast<int64_t>(words.size()) - 1))];
  }
};

// A tag's words and their counts: at least 10 distinct words, at least 2% of its uses.
bool open_class(const std::map<std::string, int64_t>& words) {
  int64_t occurrences = 0;
  for (const auto& [word, n] : words) occurrences += n;
  const auto distinct = static_cast<int64_t>(words.size());
  return distinct >= 10 && distinct * 50 >= occurrences;
}

}  // namespace

std::set<std::string> open_class_tags(const std::vector<Tree>& trees) {
  std::set<std::string> open;
  for (const auto& [tag, words] : words_by_tag(trees))
    if (open_class(words)) open.insert(tag);
  return open;
}

std::vector<Tree> word_swapped_copies(const std::vector<Tree>& trees, int copies, double rate,
                                      uint64_t seed) {
  std::map<std::string, std::vector<std::string>> choices;
  for (const auto& [tag, words] : words_by_tag(trees)) {
    if (!open_class(words)) continue;
    for (const auto& [word, n] : words) choices[tag].push_back(word);
  }
  Swapper swapper{choices, rate, SplitMix64(seed ^ 0x5157415053ull)};
  std::vector<Tree> out;
  if (copies > 0) out.reserve(trees.size() * static_cast<size_t>(copies));
  for (int c = 0; c < copies; ++c)
    for (const Tree& t : trees) {
      out.push_back(t);
      swapper.swap(out.back());
    }
  return out;
}

}  // namespace transduce::parse
