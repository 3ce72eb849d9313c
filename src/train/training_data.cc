#include "train/training_data.h"

#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "parse/tree_data.h"
#include "parse/word_swap.h"

namespace transduce {

std::vector<Example> load_examples(const std::string& src, const std::string& tgt,
                                   const Tokenizer& tokenizer, int max_len, const char* what,
                                   ValidText* valid_text, ParallelText* kept_text) {
  ParallelText text = read_parallel(src, tgt);
  EncodeStats stats;
  std::vector<int64_t> kept;
  std::vector<Example> examples = encode_parallel(text, tokenizer, max_len, &stats, &kept);
  TD_CHECK(!(kept_text && valid_text), "load_examples moves the lines to one of them");
  if (kept_text) {
    for (int64_t line : kept) {
      kept_text->src.push_back(std::move(text.src[static_cast<size_t>(line)]));
      kept_text->tgt.push_back(std::move(text.tgt[static_cast<size_t>(line)]));
    }
  }
  if (valid_text) {
    valid_text->file_lines = static_cast<int64_t>(text.tgt.size());
    for (int64_t line : kept)
      valid_text->references.push_back(std::move(text.tgt[static_cast<size_t>(line)]));
    valid_text->lines = std::move(kept);
    valid_text->detokenize = [&tokenizer](const std::vector<int32_t>& ids) {
      return tokenizer.decode(ids);
    };
  }
  spdlog::info(
      "{} data: {} pairs, {} kept, {} skipped as empty, {} skipped as longer than {} tokens", what,
      stats.pairs, stats.kept, stats.skipped_empty, stats.skipped_long, max_len);
  if (examples.empty()) fail("{} data: no usable sentence pairs in {} and {}", what, src, tgt);
  return examples;
}

std::vector<Example> load_tree_examples(const std::string& path, const Tokenizer& tokenizer,
                                        parse::TreeScheme scheme, int max_len, const char* what,
                                        const TreeAugmentation& augment) {
  const parse::TreeVocab vocab(tokenizer);
  std::vector<parse::Tree> trees = parse::read_normalised_trees(path);
  if (augment.word_swaps > 0) {
    std::vector<parse::Tree> more =
        parse::word_swapped_copies(trees, augment.word_swaps, augment.word_swap_rate, augment.seed);
    const std::set<std::string> open = parse::open_class_tags(trees);
    spdlog::info("{} trees: {} {} added with words of the open-class tags ({}) swapped at rate {}",
                 what, augment.word_swaps, augment.word_swaps == 1 ? "copy" : "copies",
                 fmt::join(open, " "), augment.word_swap_rate);
    trees.insert(trees.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  if (augment.subtrees) {
    std::vector<parse::Tree> more = parse::subtrees(trees);
    spdlog::info("{} trees: {} constituents of two or more words added as trees of their own", what,
                 more.size());
    trees.insert(trees.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  parse::TreeDataStats stats;
  std::vector<Example> examples =
      parse::encode_trees(trees, tokenizer, vocab, scheme, max_len, &stats);
  spdlog::info(
      "{} trees: {} read, {} kept, {} skipped as empty, {} skipped as longer than {} tokens{}",
      what, stats.trees, stats.kept, stats.skipped_empty, stats.skipped_long, max_len,
      stats.skipped_unknown > 0
          ? fmt::format(", {} skipped for labels the vocabulary lacks (first: {})",
                        stats.skipped_unknown, stats.unknown_label)
          : "");
  if (examples.empty()) fail("{} trees: no usable tree in {}", what, path);
  return examples;
}

}  // namespace transduce
