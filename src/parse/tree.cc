#include "parse/tree.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>

#include "core/error.h"
#include "text/corpus.h"

namespace transduce::parse {

namespace {

void collect(const Tree& t, std::vector<std::string>& out, bool tags) {
  if (t.preterminal()) {
    if (!t.word.empty()) out.push_back(tags ? t.label : t.word);  // not an empty root
    return;
  }
  for (const Tree& c : t.children) collect(c, out, tags);
}

// Splits bracketed text into "(", ")" and atoms (labels and words), keeping each one's line.
class Lexer {
 public:
  Lexer(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  struct Token {
    enum Kind { kOpen, kClose, kAtom, kEnd } kind;
    std::string_view text;
    int64_t line;
  };

  Token next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ == text_.size()) return {Token::kEnd, {}, line_};
    const char c = text_[pos_];
    if (c == '(' || c == ')') {
      ++pos_;
      return {c == '(' ? Token::kOpen : Token::kClose, text_.substr(pos_ - 1, 1), line_};
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) &&
           text_[pos_] != '(' && text_[pos_] != ')')
      ++pos_;
    return {Token::kAtom, text_.substr(start, pos_ - start), line_};
  }

  const std::string& name() const { return name_; }

 private:
  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

std::string shown(std::string_view atom) {
  return atom.size() > 40 ? fmt::format("'{}...'", atom.substr(0, 40)) : fmt::format("'{}'", atom);
}

// Deeper than any treebank's trees. Reading, printing, normalising and destroying a tree recurse
// once per level, so a limit keeps a line of 100000 '(' from overflowing the stack (found with
// fuzz/trees_fuzz.cc).
constexpr int kMaxDepth = 1000;

// Reads the rest of a bracket whose "(" was just taken, `depth` brackets deep (1 for a root).
Tree read_node(Lexer& lex, int64_t open_line, int depth) {
  if (depth > kMaxDepth)
    fail("{}:{}: brackets nested more than {} deep", lex.name(), open_line, kMaxDepth);
  Tree node;
  node.line = open_line;
  Lexer::Token t = lex.next();
  if (t.kind == Lexer::Token::kAtom) {
    node.label = std::string(t.text);
    t = lex.next();
  }
  std::optional<Lexer::Token> word;
  for (;; t = lex.next()) {
    switch (t.kind) {
      case Lexer::Token::kEnd:
        fail("{}:{}: unbalanced brackets: the bracket opened here is never closed", lex.name(),
             open_line);
      case Lexer::Token::kClose:
        if (word) {
          if (!node.children.empty())
            fail("{}:{}: the word {} stands outside a preterminal (beside constituents in {})",
                 lex.name(), word->line, shown(word->text),
                 node.label.empty() ? "an unlabelled bracket" : shown(node.label));
          node.word = std::string(word->text);
        } else if (node.children.empty()) {
          fail("{}:{}: an empty bracket{}", lex.name(), open_line,
               node.label.empty()
                   ? ""
                   : fmt::format(" {} with no word or constituent", shown(node.label)));
        }
        return node;
      case Lexer::Token::kOpen:
        if (word)
          fail("{}:{}: the word {} stands outside a preterminal (beside constituents in {})",
               lex.name(), word->line, shown(word->text),
               node.label.empty() ? "an unlabelled bracket" : shown(node.label));
        node.children.push_back(read_node(lex, t.line, depth + 1));
        break;
      case Lexer::Token::kAtom:
        if (word)
          fail("{}:{}: a preterminal {} with more than one word ({} and {})", lex.name(), t.line,
               shown(node.label), shown(word->text), shown(t.text));
        if (!node.children.empty())
          fail("{}:{}: the word {} stands outside a preterminal (beside constituents in {})",
               lex.name(), t.line, shown(t.text),
               node.label.empty() ? "an unlabelled bracket" : shown(node.label));
        word = t;
        break;
    }
  }
}

void print(const Tree& t, std::string& out) {
  out += '(';
  out += t.label;
  if (t.preterminal()) {
    out += ' ';
    out += t.word;
  } else {
    for (const Tree& c : t.children) {
      out += ' ';
      print(c, out);
    }
  }
  out += ')';
}

// Drops empty elements and the constituents they leave empty; false when nothing is left.
bool prune(const Tree& in, Tree& out) {
  if (in.preterminal()) {
    if (is_empty_element(in)) return false;
    out = in;
    return true;
  }
  out.label = strip_function_tags(in.label);
  out.word.clear();
  out.line = in.line;
  out.children.clear();
  for (const Tree& c : in.children) {
    Tree kept;
    if (prune(c, kept)) out.children.push_back(std::move(kept));
  }
  return !out.children.empty();
}

}  // namespace

std::vector<std::string> Tree::words() const {
  std::vector<std::string> out;
  collect(*this, out, false);
  return out;
}

std::vector<std::string> Tree::tags() const {
  std::vector<std::string> out;
  collect(*this, out, true);
  return out;
}

bool Tree::operator==(const Tree& o) const {
  return label == o.label && word == o.word && children == o.children;
}

std::vector<Tree> read_trees(std::string_view text, const std::string& name) {
  Lexer lex(text, name);
  std::vector<Tree> trees;
  for (Lexer::Token t = lex.next(); t.kind != Lexer::Token::kEnd; t = lex.next()) {
    if (t.kind == Lexer::Token::kClose)
      fail("{}:{}: unbalanced brackets: a ')' closes no bracket", name, t.line);
    if (t.kind == Lexer::Token::kAtom)
      fail("{}:{}: {} stands outside any bracket", name, t.line, shown(t.text));
    trees.push_back(read_node(lex, t.line, 1));
  }
  if (trees.empty()) fail("{}: no tree in it (empty input)", name);
  return trees;
}

std::vector<Tree> read_tree_file(const std::string& path, const std::string& name) {
  const std::string& shown = name.empty() ? path : name;
  std::vector<std::string> lines;
  try {
    lines = read_lines(path);  // path:line on invalid UTF-8
  } catch (const Error& e) {
    const std::string message = e.what();
    if (shown == path || !message.starts_with(path)) throw;
    throw Error(shown + message.substr(path.size()));
  }
  std::string text;
  for (const std::string& line : lines) {
    text += line;
    text += '\n';
  }
  return read_trees(text, shown);
}

bool is_root_label(std::string_view label) {
  return label.empty() || label == "TOP" || label == "ROOT";
}

std::string strip_function_tags(std::string_view label) {
  if (label.size() > 1 && label.front() == '-' && label.back() == '-') return std::string(label);
  size_t end = label.size();
  for (size_t i = 1; i < label.size(); ++i) {
    if (label[i] == '-' || label[i] == '=') {
      end = i;
      break;
    }
  }
  return std::string(label.substr(0, end));
}

Tree normalise(const Tree& raw) {
  // Outer brackets that only wrap: unlabelled/TOP/ROOT nodes with one constituent child.
  const Tree* inner = &raw;
  while (!inner->preterminal() && is_root_label(inner->label) && inner->children.size() == 1 &&
         !inner->children[0].preterminal() && is_root_label(inner->children[0].label))
    inner = &inner->children[0];
  Tree top;
  top.label = "TOP";
  top.line = raw.line;
  const bool rooted = !inner->preterminal() && is_root_label(inner->label);
  if (rooted) {
    for (const Tree& c : inner->children) {
      Tree kept;
      if (prune(c, kept)) top.children.push_back(std::move(kept));
    }
  } else {
    Tree kept;
    if (prune(*inner, kept)) top.children.push_back(std::move(kept));
  }
  return top;
}

std::string to_string(const Tree& t) {
  std::string out;
  print(t, out);
  return out;
}

}  // namespace transduce::parse
