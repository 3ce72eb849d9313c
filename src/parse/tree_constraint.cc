#include "parse/tree_constraint.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "text/special_ids.h"

namespace transduce::parse {

float TreeConstraint::log_word_mass(const float* logp) const {
  // One minus the few others' probability (the row sums to one; PAD and BOS, which the search
  // has banned, had next to none), rather than a sum over the whole vocabulary.
  double others = std::exp(static_cast<double>(logp[kEosId]));
  for (int32_t id : vocab_.bracket_ids()) others += std::exp(static_cast<double>(logp[id]));
  return static_cast<float>(std::log(std::max(1.0 - others, 1e-30)));
}

void TreeConstraint::apply(std::span<const int32_t> prefix, const EncodedWords& words,
                           int64_t max_len, float* logp,
                           std::span<const std::vector<int32_t>> word_tags) const {
  // The state the prefix leaves: open labels (innermost last), whether each holds a word yet,
  // and the word pieces already out.
  struct Open {
    int32_t label;
    bool filled;
  };
  std::vector<Open> open;
  int64_t out = 0, run = 0;  // opening brackets since the last word piece or closing bracket
  bool after_tag = false;    // the last token is a tag: its word's first piece comes next
  for (int32_t id : prefix) {
    const TreeVocab::Kind kind = vocab_.kind(id);
    if (kind == TreeVocab::kOpening) {
      open.push_back({vocab_.label_index(id), false});
      ++run;
      continue;
    }
    run = 0;
    after_tag = tags_ && kind == TreeVocab::kTag;
    if (after_tag) continue;
    if (kind == TreeVocab::kClosing) {
      if (open.empty()) continue;
      const bool filled = open.back().filled;
      open.pop_back();
      if (!open.empty()) open.back().filled = open.back().filled || filled;
    } else {
      ++out;
      if (!open.empty()) open.back().filled = true;
    }
  }
  const int64_t total = static_cast<int64_t>(words.pieces.size());
  const bool between_words =
      !after_tag &&
      (out == 0 || std::binary_search(words.word_ends.begin(), words.word_ends.end(), out));
  // Tokens the words still need: their pieces, and with tags a tag for each word not begun.
  const auto done =
      static_cast<size_t>(std::upper_bound(words.word_ends.begin(), words.word_ends.end(), out) -
                          words.word_ends.begin());
  int64_t left = total - out;
  if (tags_ && between_words) left += static_cast<int64_t>(words.word_ends.size() - done);
  float keep_next = out < total ? logp[words.pieces[static_cast<size_t>(out)]] : 0.0f;
  if (any_word_ && out < total) keep_next = between_words && !tags_ ? log_word_mass(logp) : 0.0f;
  const float keep_eos = logp[kEosId];
  std::vector<std::pair<int32_t, float>> kept;
  if (between_words) {
    const int64_t depth = static_cast<int64_t>(open.size());
    // Tokens still allowed before EOS, after the one chosen now. Opening one more needs its own
    // closing bracket on top of the words' tokens and the closings due.
    const int64_t after = max_len - static_cast<int64_t>(prefix.size()) - 1;
    const bool open_ok =
        left > 0 && left + depth + 1 <= after && (max_opens_ <= 0 || run < max_opens_);
    const bool close_ok = depth > 0 && open.back().filled;
    for (int32_t id : vocab_.bracket_ids()) {
      const bool ok = vocab_.kind(id) == TreeVocab::kOpening
                          ? open_ok
                          : close_ok && vocab_.label_index(id) == open.back().label;
      if (!ok) continue;
      const bool opening = vocab_.kind(id) == TreeVocab::kOpening;
      kept.emplace_back(id, opening ? std::min(logp[id] + open_bonus_, 0.0f) : logp[id]);
    }
    if (tags_ && out < total) {
      const bool listed = done < word_tags.size() && !word_tags[done].empty();
      for (int32_t id : listed ? word_tags[done] : vocab_.tag_ids())
        kept.emplace_back(id, logp[id]);
    }
  }
  std::fill(logp, logp + vocab_.size(), -std::numeric_limits<float>::infinity());
  for (const auto& [id, value] : kept) logp[id] = value;
  if (out < total && !(tags_ && between_words))
    logp[words.pieces[static_cast<size_t>(out)]] = keep_next;
  if (between_words && open.empty() && out >= total) logp[kEosId] = keep_eos;
}

}  // namespace transduce::parse
