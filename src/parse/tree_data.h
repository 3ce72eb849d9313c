// Training pairs from a treebank: the words of each (normalised) tree as the source, its
// linearisation as the target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parse/tree.h"
#include "parse/tree_vocab.h"
#include "text/example.h"

namespace transduce::parse {

struct TreeDataStats {
  int64_t trees = 0;
  int64_t kept = 0;
  int64_t skipped_empty = 0;    // nothing left after removing empty elements
  int64_t skipped_long = 0;     // a side longer than max_len tokens (EOS counted)
  int64_t skipped_unknown = 0;  // a label without a symbol in the vocabulary
  std::string unknown_label;    // the first such label
};

// Reads and normalises every tree of `path` (errors name the file and line).
std::vector<Tree> read_normalised_trees(const std::string& path);

// Data augmentation: every constituent of `trees` spanning at least two words, below the root,
// as a tree of its own (under a TOP root), in order. The sentences themselves are not included.
std::vector<Tree> subtrees(const std::vector<Tree>& trees);

// One example per usable tree, in order, its target written in `scheme`. `max_len` <= 0 means no
// limit.
std::vector<Example> encode_trees(const std::vector<Tree>& trees, const Tokenizer& tokenizer,
                                  const TreeVocab& vocab, TreeScheme scheme, int max_len,
                                  TreeDataStats* stats);

}  // namespace transduce::parse
