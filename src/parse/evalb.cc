#include "parse/evalb.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "core/error.h"

namespace transduce::parse {

namespace {

// COLLINS.prm's DELETE_LABEL entries. A preterminal with one of these tags is deleted with its word
// (each tree by its own tags, as EVALB does); a constituent whose label (cut by evalb_label) is one
// of them is not counted.
constexpr std::array<std::string_view, 7> kDeleteLabels = {"TOP", "-NONE-", ",", ":",
                                                           "``",  "''",     "."};
// COLLINS.prm's DELETE_LABEL_FOR_LENGTH: words that do not count in a sentence's length.
constexpr std::string_view kEmptyElementTag = "-NONE-";

bool deleted(std::string_view label) {
  for (std::string_view d : kDeleteLabels)
    if (label == d) return true;
  return false;
}

// COLLINS.prm's EQ_LABEL ADVP PRT: labels compare equal when their classes do.
std::string_view label_class(std::string_view label) {
  return label == "PRT" ? "ADVP" : label;
}

struct Word {
  std::string_view text, tag;
  bool scored;  // not deleted as punctuation (or by another DELETE_LABEL tag)
};

struct Span {
  int64_t start, end;  // scored words [start, end)
  std::string label;   // its class
};

// A tree as EVALB sees it: its words but empty elements (whose positions, 1-based, messages give),
// which of them are scored, and the counted brackets over the scored words.
struct Scorable {
  std::vector<Word> words;
  std::vector<int64_t> scored;  // indices into words
  std::vector<Span> spans;
};

void collect(const Tree& t, Scorable& s) {
  if (t.preterminal()) {
    if (t.label == kEmptyElementTag) return;
    const bool scored = !deleted(t.label);
    s.words.push_back({t.word, t.label, scored});
    if (scored) s.scored.push_back(static_cast<int64_t>(s.words.size()) - 1);
    return;
  }
  const auto start = static_cast<int64_t>(s.scored.size());
  for (const Tree& c : t.children) collect(c, s);
  const auto end = static_cast<int64_t>(s.scored.size());
  if (start == end) return;  // covers no scored word (only punctuation or empty elements)
  const std::string label = evalb_label(t.label);
  // The root: EVALB drops TOP by DELETE_LABEL; an unlabelled or ROOT bracket it would count.
  if (t.label.empty() || label == "ROOT" || deleted(label)) return;
  s.spans.push_back({start, end, std::string(label_class(label))});
}

Scorable scorable(const Tree& t) {
  Scorable s;
  collect(t, s);
  return s;
}

void gather_tags(const Tree& t, std::vector<std::string_view>& tags) {
  if (t.preterminal()) {
    if (t.label != kEmptyElementTag) tags.push_back(t.label);
    return;
  }
  for (const Tree& c : t.children) gather_tags(c, tags);
}

void set_tags(Tree& t, const std::vector<std::string_view>& tags, size_t& next) {
  if (t.preterminal()) {
    if (t.label != kEmptyElementTag) t.label = std::string(tags[next++]);
    return;
  }
  for (Tree& c : t.children) set_tags(c, tags, next);
}

// `test` with the gold tags on its words (empty elements aside), when both have as many words.
Tree with_gold_tags(const Tree& test, const Tree& gold) {
  std::vector<std::string_view> gold_tags, test_tags;
  gather_tags(gold, gold_tags);
  gather_tags(test, test_tags);
  Tree out = test;
  if (gold_tags.size() != test_tags.size()) return out;
  size_t next = 0;
  set_tags(out, gold_tags, next);
  return out;
}

std::string quoted(std::string_view s) {
  return fmt::format("'{}'", s);
}

// The first place where the two trees' words differ, or where one tree deletes a word as
// punctuation and the other keeps it; `tags_differ` says whether it is the latter.
std::string first_difference(const Scorable& g, const Scorable& t, bool& tags_differ) {
  const size_t common = std::min(g.words.size(), t.words.size());
  for (size_t i = 0; i < common; ++i) {
    const Word& gw = g.words[i];
    const Word& tw = t.words[i];
    if (gw.text != tw.text)
      return fmt::format("word {} is {} in gold but {} in test", i + 1, quoted(gw.text),
                         quoted(tw.text));
    if (gw.scored != tw.scored) {
      tags_differ = true;
      return fmt::format(
          "word {} {} is punctuation by its {} tag {} but not by its {} tag {} (EVALB deletes "
          "punctuation by each tree's own tags)",
          i + 1, quoted(gw.text), gw.scored ? "test" : "gold", quoted(gw.scored ? tw.tag : gw.tag),
          gw.scored ? "gold" : "test", quoted(gw.scored ? gw.tag : tw.tag));
    }
  }
  return fmt::format("gold has {} words, test {}", g.words.size(), t.words.size());
}

double percent(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

bool evalb_deletes_tag(std::string_view tag) {
  return deleted(tag);
}

std::string evalb_label(std::string_view label) {
  return std::string(label.substr(0, label.find_first_of("-=")));
}

double EvalbSentence::recall() const {
  return percent(matched, gold_brackets);
}
double EvalbSentence::precision() const {
  return percent(matched, test_brackets);
}
double EvalbSentence::tagging_accuracy() const {
  return percent(correct_tags, words);
}

void EvalbTotals::add(const EvalbSentence& s) {
  ++sentences;
  if (s.status == EvalbStatus::kError) {
    ++errors;
    return;
  }
  if (s.status == EvalbStatus::kSkipped) {
    ++skipped;
    return;
  }
  matched += s.matched;
  gold_brackets += s.gold_brackets;
  test_brackets += s.test_brackets;
  if (s.matched == s.gold_brackets && s.matched == s.test_brackets) ++complete_matches;
  crossing += s.crossing;
  if (s.crossing == 0) ++no_crossing;
  if (s.crossing <= 2) ++two_or_fewer_crossing;
  words += s.words;
  correct_tags += s.correct_tags;
}

double EvalbTotals::recall() const {
  return percent(matched, gold_brackets);
}
double EvalbTotals::precision() const {
  return percent(matched, test_brackets);
}
double EvalbTotals::f1() const {
  const double r = recall(), p = precision();
  return r + p == 0.0 ? 0.0 : 2.0 * p * r / (p + r);
}
double EvalbTotals::complete_match() const {
  return percent(complete_matches, scored());
}
double EvalbTotals::average_crossing() const {
  return scored() == 0 ? 0.0 : static_cast<double>(crossing) / static_cast<double>(scored());
}
double EvalbTotals::no_crossing_rate() const {
  return percent(no_crossing, scored());
}
double EvalbTotals::two_or_fewer_crossing_rate() const {
  return percent(two_or_fewer_crossing, scored());
}
double EvalbTotals::tagging_accuracy() const {
  return percent(correct_tags, words);
}

EvalbSentence evalb_sentence(const Tree& gold, const Tree& test, const EvalbOptions& options) {
  EvalbSentence s;
  const Scorable g = scorable(gold);
  // Scorable points into the trees: the retagged copy must outlive it.
  const Tree retagged = options.gold_tags ? with_gold_tags(test, gold) : Tree();
  const Scorable t = scorable(options.gold_tags ? retagged : test);
  s.length = static_cast<int64_t>(g.words.size());
  if (t.scored.empty()) {
    s.status = EvalbStatus::kSkipped;
    s.problem = "the test tree has no word to score (punctuation and empty elements deleted)";
    return s;
  }
  if (g.scored.size() != t.scored.size()) {
    s.status = EvalbStatus::kError;
    s.problem = fmt::format(
        "length mismatch ({} word{} to score in gold, {} in test, punctuation and empty elements "
        "deleted): {}",
        g.scored.size(), g.scored.size() == 1 ? "" : "s", t.scored.size(),
        first_difference(g, t, s.punctuation_tags_differ));
    return s;
  }
  for (size_t i = 0; i < g.scored.size(); ++i) {
    const Word& gw = g.words[g.scored[i]];
    const Word& tw = t.words[t.scored[i]];
    if (gw.text != tw.text) {
      s.status = EvalbStatus::kError;
      s.problem =
          fmt::format("word mismatch: {}", first_difference(g, t, s.punctuation_tags_differ));
      return s;
    }
  }
  for (size_t i = 0; i < g.scored.size(); ++i)
    if (label_class(g.words[g.scored[i]].tag) == label_class(t.words[t.scored[i]].tag))
      ++s.correct_tags;
  s.words = static_cast<int64_t>(g.scored.size());
  s.gold_brackets = static_cast<int64_t>(g.spans.size());
  s.test_brackets = static_cast<int64_t>(t.spans.size());

  // Each gold bracket matches at most one test bracket of the same span and label class: the
  // count for a labelled span is the smaller of its two multiplicities.
  std::map<std::tuple<int64_t, int64_t, std::string_view>, int64_t> unmatched_gold;
  for (const Span& b : g.spans) ++unmatched_gold[{b.start, b.end, b.label}];
  for (const Span& b : t.spans) {
    const auto it = unmatched_gold.find({b.start, b.end, b.label});
    if (it != unmatched_gold.end() && it->second > 0) {
      --it->second;
      ++s.matched;
    }
  }
  // A test bracket crosses when some gold bracket overlaps it without either containing the other.
  for (const Span& b : t.spans) {
    for (const Span& gb : g.spans) {
      if ((gb.start < b.start && gb.end > b.start && gb.end < b.end) ||
          (gb.start > b.start && gb.start < b.end && gb.end > b.end)) {
        ++s.crossing;
        break;
      }
    }
  }
  return s;
}

EvalbResult evalb(const std::vector<Tree>& gold, const std::vector<Tree>& test,
                  const EvalbOptions& options) {
  if (gold.size() != test.size())
    fail("{} gold trees but {} test trees: the two need the same sentences in the same order",
         gold.size(), test.size());
  EvalbResult result;
  result.cutoff_length = options.cutoff_length;
  for (size_t i = 0; i < gold.size(); ++i) {
    EvalbSentence s = evalb_sentence(gold[i], test[i], options);
    s.id = static_cast<int64_t>(i) + 1;
    result.all.add(s);
    if (s.length <= options.cutoff_length) result.up_to_cutoff.add(s);
    result.sentences.push_back(std::move(s));
  }
  return result;
}

std::string format_evalb_sentence(const EvalbSentence& s) {
  return fmt::format(
      "{:4d}  {:3d}    {:d}  {:6.2f} {:6.2f}   {:3d}    {:3d}  {:3d}    {:3d}   {:4d}  {:4d}   "
      "{:6.2f}",
      s.id, s.length, static_cast<int>(s.status), s.recall(), s.precision(), s.matched,
      s.gold_brackets, s.test_brackets, s.crossing, s.words, s.correct_tags, s.tagging_accuracy());
}

std::string evalb_sentence_header() {
  // Right-aligned over format_evalb_sentence's columns: Match, Gold, Test and Cross count
  // brackets, Words the words scored, Tags those with the gold tag.
  return "  ID Len. Stat  Recall  Prec. Match   Gold Test  Cross  Words  Tags Accuracy";
}

}  // namespace transduce::parse
