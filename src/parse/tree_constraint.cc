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
  if (tags_)
    for (int32_t id : vocab_.tag_ids()) others += std::exp(static_cast<double>(logp[id]));
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
  bool after_tag = false;    // the last token is a tag (tags before words): its word's piece next
  bool last_piece = false;   // the last token is a word piece (tags after words)
  for (int32_t id : prefix) {
    const TreeVocab::Kind kind = vocab_.kind(id);
    last_piece = false;
    if (kind == TreeVocab::kOpening) {
      open.push_back({vocab_.label_index(id), false});
      ++run;
      continue;
    }
    run = 0;
    if (tags_ && kind == TreeVocab::kTag) {
      after_tag = !tag_after_;
      continue;
    }
    after_tag = false;
    if (kind == TreeVocab::kClosing) {
      if (open.empty()) continue;
      const bool filled = open.back().filled;
      open.pop_back();
      if (!open.empty()) open.back().filled = open.back().filled || filled;
    } else {
      ++out;
      last_piece = true;
      if (!open.empty()) open.back().filled = true;
    }
  }
  const int64_t total = static_cast<int64_t>(words.pieces.size());
  const bool at_word_end =
      out == 0 || std::binary_search(words.word_ends.begin(), words.word_ends.end(), out);
  // Tags after words: a word's last piece is out and its tag is due.
  const bool tag_due = tag_after_ && last_piece && at_word_end;
  const bool between_words = !after_tag && !tag_due && at_word_end;
  // Tokens the words still need: their pieces, and with tags a tag for each word not begun
  // (between words, every word begun has its tag).
  const auto done =
      static_cast<size_t>(std::upper_bound(words.word_ends.begin(), words.word_ends.end(), out) -
                          words.word_ends.begin());
  int64_t left = total - out;
  if (tags_ && between_words) left += static_cast<int64_t>(words.word_ends.size() - done);
  float keep_next = out < total ? logp[words.pieces[static_cast<size_t>(out)]] : 0.0f;
  const bool tag_first = tags_ && !tag_after_;  // a tag, not a piece, begins each word
  if (any_word_ && out < total)
    keep_next = between_words && !tag_first ? log_word_mass(logp) : 0.0f;
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
  }
  // The tags the word `word` may take.
  const auto add_tags = [&](size_t word) {
    const bool listed = word < word_tags.size() && !word_tags[word].empty();
    for (int32_t id : listed ? word_tags[word] : vocab_.tag_ids()) kept.emplace_back(id, logp[id]);
  };
  if (tag_first && between_words && out < total) add_tags(done);
  if (tag_due) add_tags(done - 1);
  std::fill(logp, logp + vocab_.size(), -std::numeric_limits<float>::infinity());
  for (const auto& [id, value] : kept) logp[id] = value;
  if (out < total && !tag_due && !(tag_first && between_words))
    logp[words.pieces[static_cast<size_t>(out)]] = keep_next;
  if (between_words && open.empty() && out >= total) logp[kEosId] = keep_eos;
}

}  // namespace transduce::parse
