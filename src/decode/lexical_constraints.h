// Lexically constrained decoding's bookkeeping (Post & Vilar 2018): the phrases an output must
// hold, and where a hypothesis stands with them. A phrase is met once it occurs anywhere in the
// output, as contiguous pieces; an unmet phrase is under way by the longest of its prefixes that
// ends the output (so a broken partial match that restarts is still followed).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace transduce {

class LexicalConstraints {
 public:
  LexicalConstraints() = default;
  // At most 64 phrases, none empty.
  explicit LexicalConstraints(std::vector<std::vector<int32_t>> phrases);

  bool empty() const { return phrases_.empty(); }
  const std::vector<std::vector<int32_t>>& phrases() const { return phrases_; }
  uint64_t all() const { return all_; }  // the mask of every phrase
  int64_t total_tokens() const { return total_; }

  // The phrases met once `next` follows `tokens` (`met`: those met in `tokens`).
  uint64_t met_after(uint64_t met, std::span<const int32_t> tokens, int32_t next) const;
  // How many of the phrases' tokens `tokens` (with `met`) has produced: those of the met phrases,
  // plus the longest partial match of an unmet one. Dynamic beam allocation's bank.
  int64_t progress(uint64_t met, std::span<const int32_t> tokens, int32_t next) const;
  // The tokens that would take an unmet phrase one step further after `tokens`, one per unmet
  // phrase (repeats possible), appended to `out`.
  void advancing_tokens(uint64_t met, std::span<const int32_t> tokens,
                        std::vector<int32_t>& out) const;

 private:
  // The longest k < |phrase| such that the phrase's first k tokens end tokens + [next] (next < 0:
  // tokens alone).
  int64_t partial(const std::vector<int32_t>& phrase, std::span<const int32_t> tokens,
                  int32_t next) const;

  std::vector<std::vector<int32_t>> phrases_;
  uint64_t all_ = 0;
  int64_t total_ = 0;
};

}  // namespace transduce
