// What training reads: sentence pairs from parallel text, or a parser's pairs (words and their
// linearised tree) from a treebank, encoded with the model's vocabulary and reported in the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parse/tree_vocab.h"
#include "text/corpus.h"
#include "text/example.h"
#include "text/tokenizer.h"
#include "train/validation.h"

namespace transduce {

// The pairs of `src` and `tgt` no side of which is empty or longer than `max_len` tokens; `what`
// names them in the log ("training"). `valid_text`, when given, receives what validation by
// translation scores against; `kept_text`, the raw lines of the pairs returned (for subword
// sampling; moved there, so not with valid_text). No usable pair is an error.
std::vector<Example> load_examples(const std::string& src, const std::string& tgt,
                                   const Tokenizer& tokenizer, int max_len, const char* what,
                                   ValidText* valid_text = nullptr,
                                   ParallelText* kept_text = nullptr);

// How a parser's training trees are augmented (validation trees are not).
struct TreeAugmentation {
  bool subtrees = false;  // every constituent of two or more words as a sentence of its own
  int word_swaps = 0;     // copies with words of open-class tags swapped
  double word_swap_rate = 0;
  uint64_t seed = 1;
};

// A parser's pairs: each tree's words and its linearisation (parse/linearize.h).
std::vector<Example> load_tree_examples(const std::string& path, const Tokenizer& tokenizer,
                                        parse::TreeScheme scheme, int max_len, const char* what,
                                        const TreeAugmentation& augment = {});

}  // namespace transduce
