// The target language of a parser inside a shared vocabulary: its bracket symbols `(L` and `)L`
// and the word slot are SentencePiece pieces of their own (Tokenizer::train's symbols), so the
// source words and the target brackets share one embedding, as the paper's models do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "parse/linearize.h"
#include "parse/tree.h"
#include "text/tokenizer.h"

namespace transduce::parse {

// The symbols that trees over these (normalised) trees need: the slot, then `(L` and `)L` for
// every constituent label, then `{T}` for every part-of-speech tag, each in order of first
// appearance.
std::vector<std::string> tree_symbols(const std::vector<Tree>& trees);
// A tag's symbol: `{NN}`, `{%2C}` for `,`. Braces, like brackets, never occur in escaped words.
std::string tag_symbol(std::string_view tag);

// A word as the model reads it: the Penn Treebank's escapes for brackets, which a tree's words
// cannot hold (`(` -> -LRB-, `)` -> -RRB-, `{` -> -LCB-, `}` -> -RCB-).
std::string escape_word(std::string_view word);

// Source pieces of a sentence, word by word (each word escaped, then encoded alone, which is how
// SentencePiece splits a sentence at spaces), and for each word the number of pieces up to and
// including it.
struct EncodedWords {
  std::vector<int32_t> pieces;
  std::vector<int64_t> word_ends;
};
EncodedWords encode_words(const Tokenizer& tokenizer, const std::vector<std::string>& words);

// How a target writes the words: each as the slot XX (Vinyals et al.), as its own pieces, copied
// from the source (which ties every bracket to the words around it), or as its part-of-speech
// tag's symbol followed by its pieces (the parser then tags too):
//   xx      (S (NP XX XX )NP (VP XX )VP XX )S
//   words   (S (NP ▁Ms . ▁Ha ag )NP (VP ▁plays )VP ▁. )S
//   tagged  (S (NP {NNP} ▁Ms . {NNP} ▁Ha ag )NP (VP {VBZ} ▁plays )VP {.} ▁. )S
// or with each tag after its word's pieces, where the model has seen the word when it tags it:
//   tagged-after  (S (NP ▁Ms . {NNP} ▁Ha ag {NNP} )NP (VP ▁plays {VBZ} )VP ▁. {.} )S
enum class TreeScheme { kPlaceholder, kWords, kTagged, kTaggedAfter };
// Every scheme's name, in the enum's order.
inline constexpr std::string_view kSchemeNames[] = {"xx", "words", "tagged", "tagged-after"};
std::string scheme_name(TreeScheme scheme);
// "\"xx\", \"words\", ... or \"tagged-after\"", for messages.
std::string scheme_names_quoted();
// nullopt for another name.
std::optional<TreeScheme> scheme_from_name(std::string_view name);
// Whether a scheme writes the words' tags.
inline bool scheme_has_tags(TreeScheme scheme) {
  return scheme == TreeScheme::kTagged || scheme == TreeScheme::kTaggedAfter;
}

class TreeVocab {
 public:
  // The symbols present in `tokenizer`; a vocabulary without the slot (one not made by
  // `transduce vocab --trees`) is refused with one line naming it.
  explicit TreeVocab(const Tokenizer& tokenizer);

  // The ids of a linearised tree over `words` (encode_words of its words, which must be as many
  // as its slots); nullopt (and the label, or the tag's symbol, in `missing`) when a label or a
  // tag (the tagged scheme) has no symbol.
  std::optional<std::vector<int32_t>> encode(const std::vector<Item>& items, TreeScheme scheme,
                                             const EncodedWords& words,
                                             std::string* missing = nullptr) const;
  // Items of ids (PAD, BOS and EOS skipped): brackets, and slots for everything else. With
  // kPlaceholder, every other piece is a slot; with kWords, a run of pieces is a slot, a new one
  // starting at a piece that begins a word ('▁') or follows a bracket; with kTagged, a tag starts
  // a slot carrying it, and the pieces after it are its word (pieces without a tag before them
  // make a slot without a tag, as in kWords); with kTaggedAfter, the words' slots are kWords'
  // and a tag gives its tag to the slot its pieces follow (a tag after no word is dropped).
  std::vector<Item> decode(const std::vector<int32_t>& ids, TreeScheme scheme) const;
  // What stands for the words in a target, word by word: a slot each, or their own pieces.
  EncodedWords target_words(TreeScheme scheme, const EncodedWords& source) const;

  // What each id is, for the decoding constraint.
  enum Kind : uint8_t { kText, kOpening, kClosing, kWordSlot, kTag };
  Kind kind(int32_t id) const { return kinds_[static_cast<size_t>(id)]; }
  // kOpening and kClosing ids: the index of their label (an opening and a closing bracket of the
  // same label share it).
  int32_t label_index(int32_t id) const { return labels_[static_cast<size_t>(id)]; }
  bool bracket(int32_t id) const { return kind(id) == kOpening || kind(id) == kClosing; }
  int32_t slot_id() const { return slot_; }
  int64_t size() const { return static_cast<int64_t>(kinds_.size()); }
  // Every bracket's id, in increasing order.
  const std::vector<int32_t>& bracket_ids() const { return bracket_ids_; }
  // Every tag symbol's id, in increasing order (none in a vocabulary made before tags were).
  const std::vector<int32_t>& tag_ids() const { return tag_ids_; }
  // The tag a kTag id stands for: `NN` for `{NN}`.
  const std::string& tag_name(int32_t id) const {
    return tag_names_.at(static_cast<size_t>(labels_.at(static_cast<size_t>(id))));
  }
  // The id of a tag's symbol, -1 when the vocabulary has none.
  int32_t tag_id(const std::string& tag) const;

 private:
  std::vector<Kind> kinds_;
  std::vector<int32_t> labels_;
  std::vector<std::string> label_names_;
  std::unordered_map<std::string, int32_t> label_of_name_;
  std::vector<int32_t> open_of_label_, close_of_label_;
  std::vector<int32_t> bracket_ids_;
  std::vector<int32_t> tag_ids_;
  std::vector<std::string> tag_names_;  // kTag ids: labels_ indexes these
  std::unordered_map<std::string, int32_t> tag_of_name_;
  std::vector<bool> starts_word_;  // pieces that begin a word ('▁...')
  int32_t slot_ = -1;
};

}  // namespace transduce::parse
