// Constituency trees in the Penn Treebank's bracketed format: reading them (one per line or spread
// over lines, as in .mrg files), normalising them as parsers do, and writing them back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace transduce::parse {

// A node is a constituent (label and children) or a preterminal (label and word, no children).
// The root of a tree read from a file keeps its outer bracket: an unlabelled one has label "".
struct Tree {
  std::string label;
  std::string word;  // preterminals only
  std::vector<Tree> children;
  int64_t line = 0;  // where the node's bracket opens (1-based), for messages

  bool preterminal() const { return children.empty(); }
  // The words of the preterminals, left to right.
  std::vector<std::string> words() const;
  // The preterminal labels (part-of-speech tags), left to right.
  std::vector<std::string> tags() const;
  bool operator==(const Tree& other) const;  // labels, words and shape; not line numbers
};

// Reads every tree of `text`, which may hold one tree a line or trees spread over several lines.
// `name` names the input in messages. Errors (transduce::Error, one line, "name:LINE: ..."): an
// unbalanced bracket, a word outside a preterminal (or a preterminal with several words), a
// bracket with neither label nor children, text outside any bracket, and no tree at all.
std::vector<Tree> read_trees(std::string_view text, const std::string& name);
// The same for a file ("path: cannot open: ..." when it cannot be read), named `name` in
// messages when given (e.g. "stdin" for /dev/stdin).
std::vector<Tree> read_tree_file(const std::string& path, const std::string& name = "");

// The root label a treebank may give its outermost bracket (besides none at all).
bool is_root_label(std::string_view label);
// `NP-SBJ-1` -> `NP`, `PP-LOC=2` -> `PP`, `-NONE-` and `-LRB-` unchanged: the label before its
// first '-' or '=' (a label starting with '-' keeps its leading part, `-NONE-` stays whole).
std::string strip_function_tags(std::string_view label);
// Whether a preterminal is an empty element (trace, null complementiser...): tag -NONE-.
inline bool is_empty_element(const Tree& t) {
  return t.preterminal() && t.label == "-NONE-";
}

// The tree as parsers see it: function tags and indices stripped from constituent labels (the tags
// of preterminals kept as they are), empty elements dropped with every
// constituent they leave empty, and the root made a `TOP` node over the sentence's constituents:
// an unlabelled, TOP or ROOT outer bracket (nested ones too) is taken as the root, and a tree with
// another root label is put under a new TOP. Returns a TOP with no children when nothing but
// empty elements remains.
Tree normalise(const Tree& raw);

// One line, e.g. `(TOP (S (NP (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. .)))`.
// A root with label "" prints as `( (S ...))`.
std::string to_string(const Tree& t);

}  // namespace transduce::parse
