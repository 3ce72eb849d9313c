// Trees as token sequences (Vinyals et al., "Grammar as a Foreign Language"; section 6.3 of the
// paper): the source is the sentence's words, the target its brackets with every word replaced by
// a slot, `(S (NP XX XX )NP (VP XX (NP XX )NP )VP XX )S`. The TOP root is left out: the target is
// the sequence of the root's children. Restoring turns any token sequence back into a well-formed
// tree over exactly the sentence's words, repairing what does not fit and counting the repairs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parse/tree.h"

namespace transduce::parse {

// The word slot of the target; restored preterminals get it as their tag when the model gave
// them none.
inline constexpr std::string_view kSlot = "XX";

// One target token: an opening bracket `(L`, a closing bracket `)L`, or a word slot.
struct Item {
  enum Kind { kOpen, kClose, kSlot } kind;
  // kOpen and kClose: the constituent's label. kSlot: the word's part-of-speech tag, or empty
  // when it has none (the schemes that predict no tags).
  std::string label;

  bool operator==(const Item&) const = default;
};

// The items of a normalised tree (its TOP root left out); slots carry the words' tags.
std::vector<Item> linearize(const Tree& top);
// Item <-> the token's text: `(NP`, `)NP`, `XX` (a slot, its tag left out). A token that is
// none of these is a slot without a tag.
std::string item_text(const Item& item);
Item item_from_text(std::string_view token);
// The target as one line of space-separated tokens.
std::string linearized_text(const Tree& top);
// The most opening brackets in a row (before a word) in the linearisations of `trees`.
int64_t max_opens_in_a_row(const std::vector<Tree>& trees);

// What restoring had to change to make a tree. Each count is a number of tokens or words.
struct Repairs {
  int64_t unclosed = 0;       // brackets still open at the end: closed there
  int64_t unopened = 0;       // closing brackets with no open bracket: dropped
  int64_t mismatched = 0;     // closing brackets naming another label than the innermost open one
  int64_t extra_slots = 0;    // word slots beyond the sentence's words: dropped
  int64_t missing_words = 0;  // words left without a slot: attached at the end
  int64_t empty = 0;          // constituents left without a word: dropped

  int64_t total() const {
    return unclosed + unopened + mismatched + extra_slots + missing_words + empty;
  }
  Repairs& operator+=(const Repairs& o);
};

// The tree over `words` that `items` describe, under a TOP root, repaired as follows: a closing
// bracket closes the innermost open constituent whatever its label (a mismatch is counted, the
// opening label kept); a closing bracket with nothing open is dropped; slots take the words in
// order, with the slot's tag (XX when it has none), and slots beyond the last word are dropped;
// words without a slot are attached, tagged XX, at the end
// of the top level's last constituent (to the root when a word or nothing ends it); brackets still
// open at the end are closed; constituents that end up without a word are dropped. The result is
// always a well-formed tree whose words are exactly `words` (an empty sentence gives a TOP with no
// children). `repairs`, when given, is added to.
Tree restore(const std::vector<Item>& items, const std::vector<std::string>& words,
             Repairs* repairs = nullptr);

}  // namespace transduce::parse
