#include "parse/tree_vocab.h"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/error.h"
#include "text/special_ids.h"

namespace transduce::parse {

namespace {

// Constituent labels or (`tags`) part-of-speech tags, in order of first appearance.
void collect_labels(const Tree& t, bool tags, std::vector<std::string>& order,
                    std::unordered_set<std::string>& seen) {
  if (t.preterminal() == tags && seen.insert(t.label).second) order.push_back(t.label);
  for (const Tree& c : t.children) collect_labels(c, tags, order, seen);
}

// The tag a symbol `{...}` stands for.
std::string tag_of_symbol(std::string_view symbol) {
  std::string tag;
  for (size_t i = 1; i + 1 < symbol.size(); ++i) {
    if (symbol.substr(i, 3) == "%2C" || symbol.substr(i, 3) == "%25") {
      tag += symbol[i + 2] == 'C' ? ',' : '%';
      i += 2;
    } else {
      tag += symbol[i];
    }
  }
  return tag;
}

}  // namespace

std::vector<std::string> tree_symbols(const std::vector<Tree>& trees) {
  std::vector<std::string> labels, tags;
  std::unordered_set<std::string> seen_labels, seen_tags;
  for (const Tree& top : trees) {
    for (const Tree& c : top.children) {
      collect_labels(c, false, labels, seen_labels);
      collect_labels(c, true, tags, seen_tags);
    }
  }
  std::vector<std::string> symbols{std::string(kSlot)};
  for (const std::string& l : labels) symbols.push_back("(" + l);
  for (const std::string& l : labels) symbols.push_back(")" + l);
  for (const std::string& t : tags) symbols.push_back(tag_symbol(t));
  return symbols;
}

std::string tag_symbol(std::string_view tag) {
  // SentencePiece takes its symbols as one comma-separated list: a comma (the tag of `,`) and the
  // escape's own '%' are written as %2C and %25.
  std::string escaped;
  for (char c : tag) escaped += c == ',' ? "%2C" : c == '%' ? "%25" : std::string(1, c);
  return fmt::format("{{{}}}", escaped);
}

std::string scheme_name(TreeScheme scheme) {
  return std::string(kSchemeNames[static_cast<size_t>(scheme)]);
}

std::string scheme_names_quoted() {
  std::string out;
  const size_t n = std::size(kSchemeNames);
  for (size_t i = 0; i < n; ++i)
    out += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == n ? " or " : ", ", kSchemeNames[i]);
  return out;
}

std::optional<TreeScheme> scheme_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kSchemeNames); ++i)
    if (kSchemeNames[i] == name) return static_cast<TreeScheme>(i);
  return std::nullopt;
}

std::string escape_word(std::string_view word) {
  if (word == "(") return "-LRB-";
  if (word == ")") return "-RRB-";
  if (word == "{") return "-LCB-";
  if (word == "}") return "-RCB-";
  std::string out;
  for (char c : word) {
    switch (c) {
      case '(':
        out += "-LRB-";
        break;
      case ')':
        out += "-RRB-";
        break;
      case '{':
        out += "-LCB-";
        break;
      case '}':
        out += "-RCB-";
        break;
      default:
        out += c;
    }
  }
  return out;
}

TreeVocab::TreeVocab(const Tokenizer& tokenizer) {
  const int32_t n = tokenizer.vocab_size();
  kinds_.assign(static_cast<size_t>(n), kText);
  labels_.assign(static_cast<size_t>(n), -1);
  starts_word_.assign(static_cast<size_t>(n), false);
  for (int32_t id = 0; id < n; ++id) {
    const std::string piece = tokenizer.piece(id);
    starts_word_[id] = piece.starts_with("\xE2\x96\x81");  // U+2581, SentencePiece's space
    if (piece == kSlot) {
      kinds_[id] = kWordSlot;
      slot_ = id;
      continue;
    }
    // Text pieces start with '▁' or are parts of words; brackets and braces never occur in
    // escaped words.
    if (piece.size() > 2 && piece.front() == '{' && piece.back() == '}') {
      kinds_[id] = kTag;
      tag_ids_.push_back(id);
      labels_[id] = static_cast<int32_t>(tag_names_.size());
      tag_names_.push_back(tag_of_symbol(piece));
      tag_of_name_[tag_names_.back()] = id;
      continue;
    }
    if (piece.size() < 2 || (piece[0] != '(' && piece[0] != ')')) continue;
    const std::string label = piece.substr(1);
    auto [it, added] = label_of_name_.emplace(label, static_cast<int32_t>(label_names_.size()));
    if (added) {
      label_names_.push_back(label);
      open_of_label_.push_back(-1);
      close_of_label_.push_back(-1);
    }
    kinds_[id] = piece[0] == '(' ? kOpening : kClosing;
    labels_[id] = it->second;
    (piece[0] == '(' ? open_of_label_ : close_of_label_)[it->second] = id;
    bracket_ids_.push_back(id);
  }
  if (slot_ < 0)
    fail("{}: not a parsing vocabulary (no '{}' symbol): make it with `transduce vocab --trees`",
         tokenizer.path(), kSlot);
  for (size_t l = 0; l < label_names_.size(); ++l) {
    if (open_of_label_[l] < 0 || close_of_label_[l] < 0)
      fail("{}: the label '{}' has only one of its two brackets in the vocabulary",
           tokenizer.path(), label_names_[l]);
  }
}

int32_t TreeVocab::tag_id(const std::string& tag) const {
  const auto found = tag_of_name_.find(tag);
  return found == tag_of_name_.end() ? -1 : found->second;
}

std::optional<std::vector<int32_t>> TreeVocab::encode(const std::vector<Item>& items,
                                                      TreeScheme scheme, const EncodedWords& words,
                                                      std::string* missing) const {
  const EncodedWords target = target_words(scheme, words);
  std::vector<int32_t> ids;
  ids.reserve(2 * items.size() + target.pieces.size());
  size_t word = 0;
  for (const Item& item : items) {
    if (item.kind == Item::kSlot) {
      TD_CHECK(word < target.word_ends.size(), "a tree with more slots than its {} words",
               target.word_ends.size());
      int32_t tag = -1;
      if (scheme_has_tags(scheme)) {
        tag = tag_id(item.label);
        if (tag < 0) {
          if (missing) *missing = tag_symbol(item.label);
          return std::nullopt;
        }
      }
      if (scheme == TreeScheme::kTagged) ids.push_back(tag);
      const int64_t begin = word == 0 ? 0 : target.word_ends[word - 1];
      ids.insert(ids.end(), target.pieces.begin() + begin,
                 target.pieces.begin() + target.word_ends[word]);
      if (scheme == TreeScheme::kTaggedAfter) ids.push_back(tag);
      ++word;
      continue;
    }
    const auto found = label_of_name_.find(item.label);
    if (found == label_of_name_.end()) {
      if (missing) *missing = item.label;
      return std::nullopt;
    }
    const int32_t label = found->second;
    ids.push_back(item.kind == Item::kOpen ? open_of_label_[label] : close_of_label_[label]);
  }
  return ids;
}

std::vector<Item> TreeVocab::decode(const std::vector<int32_t>& ids, TreeScheme scheme) const {
  std::vector<Item> items;
  bool in_word = false;
  bool tagged_word = false;  // kTagged: a tag has opened a slot that takes the next pieces
  for (int32_t id : ids) {
    if (id == kPadId || id == kBosId || id == kEosId) continue;
    if (id < 0 || id >= size()) fail("a token id {} outside the vocabulary (size {})", id, size());
    switch (kind(id)) {
      case kOpening:
        items.push_back({Item::kOpen, label_names_[label_index(id)]});
        in_word = tagged_word = false;
        break;
      case kClosing:
        items.push_back({Item::kClose, label_names_[label_index(id)]});
        in_word = tagged_word = false;
        break;
      case kTag:
        if (scheme == TreeScheme::kTagged) {
          items.push_back({Item::kSlot, tag_name(id)});
          in_word = tagged_word = true;
          break;
        }
        if (scheme == TreeScheme::kTaggedAfter) {
          if (in_word) items.back().label = tag_name(id);
          in_word = false;
          break;
        }
        [[fallthrough]];
      default:
        if (tagged_word) {
          tagged_word = false;
        } else if (scheme == TreeScheme::kPlaceholder || !in_word || starts_word_[id]) {
          items.push_back({Item::kSlot, {}});
        }
        in_word = true;
    }
  }
  return items;
}

EncodedWords TreeVocab::target_words(TreeScheme scheme, const EncodedWords& source) const {
  if (scheme != TreeScheme::kPlaceholder) return source;
  EncodedWords out;
  for (size_t w = 0; w < source.word_ends.size(); ++w) {
    out.pieces.push_back(slot_);
    out.word_ends.push_back(static_cast<int64_t>(w) + 1);
  }
  return out;
}

EncodedWords encode_words(const Tokenizer& tokenizer, const std::vector<std::string>& words) {
  EncodedWords out;
  for (const std::string& w : words) {
    const std::vector<int32_t> ids = tokenizer.encode(escape_word(w));
    out.pieces.insert(out.pieces.end(), ids.begin(), ids.end());
    out.word_ends.push_back(static_cast<int64_t>(out.pieces.size()));
  }
  return out;
}

}  // namespace transduce::parse
