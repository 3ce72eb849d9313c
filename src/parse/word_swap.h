// Data augmentation for a parser trained on a small treebank: copies of the trees in which some
// words of open-class tags (nouns, verbs, adjectives... as the treebank itself shows them) are
// replaced by other words the treebank gives the same tag. The tree stays the same, so the model
// learns brackets from context and tag-like classes rather than from the words it has memorised,
// which is what it meets in unseen sentences.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "parse/tree.h"

namespace transduce::parse {

// The open-class tags of `trees`: those with at least 10 distinct words, which are at least 2% of
// the tag's occurrences (nouns, verbs, adjectives, adverbs, numbers; not determiners,
// prepositions, pronouns or punctuation, whose few words each mark a structure of their own).
std::set<std::string> open_class_tags(const std::vector<Tree>& trees);

// `copies` copies of `trees`, in order, in which each word with an open-class tag is replaced,
// with probability `rate`, by one of the distinct words `trees` give that tag, drawn uniformly
// (so rare words, the likeliest to be unseen, are drawn as often as common ones). The trees
// themselves are not included. Deterministic for a given `seed`.
std::vector<Tree> word_swapped_copies(const std::vector<Tree>& trees, int copies, double rate,
                                      uint64_t seed);

}  // namespace transduce::parse
