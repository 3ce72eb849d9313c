#include "parse/tree_data.h"

#include "parse/linearize.h"

namespace transduce::parse {

std::vector<Tree> read_normalised_trees(const std::string& path) {
  std::vector<Tree> trees = read_tree_file(path);
  for (Tree& t : trees) t = normalise(t);
  return trees;
}

namespace {

void collect_subtrees(const Tree& t, std::vector<Tree>& out) {
  for (const Tree& c : t.children) {
    if (c.preterminal()) continue;
    if (c.words().size() >= 2) out.push_back(Tree{"TOP", {}, {c}, c.line});
    collect_subtrees(c, out);
  }
}

}  // namespace

std::vector<Tree> subtrees(const std::vector<Tree>& trees) {
  std::vector<Tree> out;
  for (const Tree& top : trees)
    for (const Tree& c : top.children)
      if (!c.preterminal()) collect_subtrees(c, out);
  return out;
}

std::vector<Example> encode_trees(const std::vector<Tree>& trees, const Tokenizer& tokenizer,
                                  const TreeVocab& vocab, TreeScheme scheme, int max_len,
                                  TreeDataStats* stats) {
  TreeDataStats s;
  std::vector<Example> out;
  for (const Tree& t : trees) {
    ++s.trees;
    if (t.children.empty()) {
      ++s.skipped_empty;
      continue;
    }
    EncodedWords source = encode_words(tokenizer, t.words());
    std::string missing;
    std::optional<std::vector<int32_t>> target =
        vocab.encode(linearize(t), scheme, source, &missing);
    if (!target) {
      if (s.skipped_unknown++ == 0) s.unknown_label = missing;
      continue;
    }
    const auto too_long = [&](size_t n) {
      return max_len > 0 && static_cast<int64_t>(n) + 1 > max_len;
    };
    if (too_long(source.pieces.size()) || too_long(target->size())) {
      ++s.skipped_long;
      continue;
    }
    out.push_back(Example{std::move(source.pieces), std::move(*target)});
    ++s.kept;
  }
  if (stats) *stats = s;
  return out;
}

}  // namespace transduce::parse
