// Constrained decoding for parsing: at every step, only the tokens that can still lead to a
// well-formed tree over exactly the sentence's words within the output length limit. With it,
// every output restores without repair.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parse/tree_vocab.h"
#include "text/special_ids.h"

namespace transduce::parse {

class TreeConstraint {
 public:
  // `max_opens`: the most opening brackets in a row (before a word), 0 for no limit. Treebanks
  // have few (6 in the Penn Treebank sample); without a limit a half-trained model can open
  // brackets until the length limit.
  //
  // `any_word`: score the next word by the model's probability that a word comes next, whatever
  // its pieces (the sum over every piece that is not a bracket or EOS), and the rest of its pieces
  // as certain. For the `words` scheme, whose words are given by the input: the search then
  // weighs brackets against "a word here", as the `xx` scheme's slot does, rather than against
  // the model's guess of the exact piece, which a half-trained model gets wrong and then escapes
  // into opening brackets.
  //
  // `open_bonus`: added to the log-probability of every opening bracket (capped at 0, so that a
  // hypothesis never gains by growing and the search's early stop stays sound). Like a word
  // penalty in translation, it trades precision for recall: above 0 the search prefers more
  // constituents.
  //
  // `scheme`: where the words' tags are. kTagged: between words the next word is chosen as its
  // tag (any tag symbol, scored by its own probability), and its pieces follow; with any_word
  // they cost nothing. kTaggedAfter: the word's pieces (scored as kWords scores them), then only
  // a tag. The other schemes have none.
  TreeConstraint(const TreeVocab& vocab, int64_t max_opens = 0, bool any_word = false,
                 float open_bonus = 0.0f, TreeScheme scheme = TreeScheme::kPlaceholder)
      : vocab_(vocab),
        max_opens_(max_opens),
        any_word_(any_word),
        open_bonus_(open_bonus),
        tags_(scheme_has_tags(scheme)),
        tag_after_(scheme == TreeScheme::kTaggedAfter) {}

  // Sets to -inf every entry of `logp` (one per id of the vocabulary) that may not follow
  // `prefix` (assumed to obey the same rules) in a target whose words are `words`
  // (TreeVocab::target_words: a slot each, or their pieces) and that may have at most `max_len`
  // tokens before EOS. Allowed: inside a word, only its next piece; between words, the next
  // word's first piece (with tags before words: a tag, then that piece; with tags after them,
  // only a tag once a word's last piece is out) while words remain, an opening
  // bracket while words remain, the length
  // limit leaves room to close it and fewer than max_opens precede it in a row, the closing bracket
  // of the innermost open constituent once it holds a word, and EOS once every bracket is closed
  // and every word is out.
  // With tags, `word_tags` may give for each word the tag ids it may take (an empty list or no
  // lists: any tag).
  void apply(std::span<const int32_t> prefix, const EncodedWords& words, int64_t max_len,
             float* logp, std::span<const std::vector<int32_t>> word_tags = {}) const;

 private:
  // log of the total probability of the pieces a word can be made of (neither EOS, a bracket
  // nor a tag), from a row of log-probabilities that sums to one.
  float log_word_mass(const float* logp) const;

  const TreeVocab& vocab_;
  int64_t max_opens_;
  bool any_word_;
  float open_bonus_;
  bool tags_;       // the scheme writes tags
  bool tag_after_;  // after its word's pieces rather than before them
};

}  // namespace transduce::parse
