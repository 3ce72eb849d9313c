#include "parse/linearize.h"

#include <algorithm>

#include "core/error.h"

namespace transduce::parse {

namespace {

void linearize_into(const Tree& t, std::vector<Item>& out) {
  if (t.preterminal()) {
    out.push_back({Item::kSlot, t.label});
    return;
  }
  out.push_back({Item::kOpen, t.label});
  for (const Tree& c : t.children) linearize_into(c, out);
  out.push_back({Item::kClose, t.label});
}

// Drops constituents without a word, bottom up; returns how many were dropped. (A constituent
// opened and closed on nothing has no children, like a preterminal, but no word either.)
int64_t drop_empty(Tree& t) {
  int64_t dropped = 0;
  std::vector<Tree> kept;
  for (Tree& c : t.children) {
    if (c.preterminal() && !c.word.empty()) {
      kept.push_back(std::move(c));
      continue;
    }
    dropped += drop_empty(c);
    if (c.children.empty()) {
      ++dropped;
      continue;
    }
    kept.push_back(std::move(c));
  }
  t.children = std::move(kept);
  return dropped;
}

}  // namespace

std::vector<Item> linearize(const Tree& top) {
  std::vector<Item> out;
  for (const Tree& c : top.children) linearize_into(c, out);
  return out;
}

std::string item_text(const Item& item) {
  switch (item.kind) {
    case Item::kOpen:
      return "(" + item.label;
    case Item::kClose:
      return ")" + item.label;
    case Item::kSlot:
      break;
  }
  return std::string(kSlot);
}

Item item_from_text(std::string_view token) {
  if (token.size() > 1 && token[0] == '(') return {Item::kOpen, std::string(token.substr(1))};
  if (token.size() > 1 && token[0] == ')') return {Item::kClose, std::string(token.substr(1))};
  return {Item::kSlot, {}};
}

std::string linearized_text(const Tree& top) {
  std::string out;
  for (const Item& item : linearize(top)) {
    if (!out.empty()) out += ' ';
    out += item_text(item);
  }
  return out;
}

int64_t max_opens_in_a_row(const std::vector<Tree>& trees) {
  int64_t most = 0;
  for (const Tree& t : trees) {
    int64_t run = 0;
    for (const Item& item : linearize(t)) {
      run = item.kind == Item::kOpen ? run + 1 : 0;
      most = std::max(most, run);
    }
  }
  return most;
}

Repairs& Repairs::operator+=(const Repairs& o) {
  unclosed += o.unclosed;
  unopened += o.unopened;
  mismatched += o.mismatched;
  extra_slots += o.extra_slots;
  missing_words += o.missing_words;
  empty += o.empty;
  return *this;
}

Tree restore(const std::vector<Item>& items, const std::vector<std::string>& words,
             Repairs* repairs) {
  Repairs r;
  Tree top;
  top.label = "TOP";
  // The open constituents, innermost last; stack[0] is the root. Children are built in place:
  // each open node is the last child of the one below it.
  std::vector<Tree*> stack{&top};
  size_t next_word = 0;
  for (const Item& item : items) {
    Tree& parent = *stack.back();
    switch (item.kind) {
      case Item::kOpen: {
        parent.children.push_back(Tree{item.label, {}, {}, 0});
        stack.push_back(&parent.children.back());
        break;
      }
      case Item::kClose:
        if (stack.size() == 1) {
          ++r.unopened;
        } else {
          if (stack.back()->label != item.label) ++r.mismatched;
          stack.pop_back();
        }
        break;
      case Item::kSlot:
        if (next_word == words.size()) {
          ++r.extra_slots;
        } else {
          parent.children.push_back(Tree{
              item.label.empty() ? std::string(kSlot) : item.label, words[next_word++], {}, 0});
        }
        break;
    }
  }
  r.unclosed += static_cast<int64_t>(stack.size()) - 1;
  r.empty += drop_empty(top);
  if (next_word < words.size()) {
    r.missing_words += static_cast<int64_t>(words.size() - next_word);
    // The last constituent of the top level takes them, unless a bare word follows it there.
    Tree* host = &top;
    if (!top.children.empty() && !top.children.back().preterminal()) host = &top.children.back();
    for (; next_word < words.size(); ++next_word)
      host->children.push_back(Tree{std::string(kSlot), words[next_word], {}, 0});
  }
  TD_CHECK(top.words() == words, "a restored tree lost or reordered words");
  if (repairs) *repairs += r;
  return top;
}

}  // namespace transduce::parse
