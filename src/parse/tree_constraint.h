// Constrained decoding for parsing: at every step, only the tokens that can still lead to a
// well-formed tree over exactly the sentence's words within the output length limit. With it,
// every output restores without repair.
#pragma once

#include <cstdint>
#include <span>

#include "parse/tree_vocab.h"

namespace transduce::parse {

class TreeConstraint {
 public:
  explicit TreeConstraint(const TreeVocab& vocab) : vocab_(vocab) {}

  // Sets to -inf every entry of `logp` (one per id of the vocabulary) that may not follow
  // `prefix` (assumed to obey the same rules) in a target whose words are `words`
  // (TreeVocab::target_words: a slot each, or their pieces) and that may have at most `max_len`
  // tokens before EOS. Allowed: inside a word, only its next piece; between words, the next
  // word's first piece while words remain, an opening bracket while words remain and the length
  // limit leaves room to close it, the closing bracket of the innermost open constituent once it
  // holds a word, and EOS once every bracket is closed and every word is out.
  void apply(std::span<const int32_t> prefix, const EncodedWords& words, int64_t max_len,
             float* logp) const;

 private:
  const TreeVocab& vocab_;
};

}  // namespace transduce::parse
