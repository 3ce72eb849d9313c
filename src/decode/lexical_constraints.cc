#include "decode/lexical_constraints.h"

#include <algorithm>

#include "core/error.h"

namespace transduce {

namespace {

// Whether tokens + [next] (next < 0: tokens alone) ends with phrase[0, k).
bool ends_with(std::span<const int32_t> tokens, int32_t next, const std::vector<int32_t>& phrase,
               int64_t k) {
  const int64_t length = static_cast<int64_t>(tokens.size()) + (next >= 0 ? 1 : 0);
  if (k > length) return false;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t at = length - k + i;
    const int32_t t = at < static_cast<int64_t>(tokens.size()) ? tokens[at] : next;
    if (t != phrase[i]) return false;
  }
  return true;
}

}  // namespace

LexicalConstraints::LexicalConstraints(std::vector<std::vector<int32_t>> phrases)
    : phrases_(std::move(phrases)) {
  if (phrases_.size() > 64) fail("at most 64 constraints a sentence, got {}", phrases_.size());
  for (size_t p = 0; p < phrases_.size(); ++p) {
    if (phrases_[p].empty()) fail("constraint {} is empty", p + 1);
    all_ |= uint64_t{1} << p;
    total_ += static_cast<int64_t>(phrases_[p].size());
  }
}

int64_t LexicalConstraints::partial(const std::vector<int32_t>& phrase,
                                    std::span<const int32_t> tokens, int32_t next) const {
  for (int64_t k = static_cast<int64_t>(phrase.size()) - 1; k > 0; --k)
    if (ends_with(tokens, next, phrase, k)) return k;
  return 0;
}

uint64_t LexicalConstraints::met_after(uint64_t met, std::span<const int32_t> tokens,
                                       int32_t next) const {
  for (size_t p = 0; p < phrases_.size(); ++p) {
    const uint64_t bit = uint64_t{1} << p;
    if (!(met & bit) && phrases_[p].back() == next &&
        ends_with(tokens, next, phrases_[p], static_cast<int64_t>(phrases_[p].size())))
      met |= bit;
  }
  return met;
}

int64_t LexicalConstraints::progress(uint64_t met, std::span<const int32_t> tokens,
                                     int32_t next) const {
  int64_t done = 0, under_way = 0;
  for (size_t p = 0; p < phrases_.size(); ++p) {
    if (met & (uint64_t{1} << p))
      done += static_cast<int64_t>(phrases_[p].size());
    else
      under_way = std::max(under_way, partial(phrases_[p], tokens, next));
  }
  return done + under_way;
}

void LexicalConstraints::advancing_tokens(uint64_t met, std::span<const int32_t> tokens,
                                          std::vector<int32_t>& out) const {
  for (size_t p = 0; p < phrases_.size(); ++p)
    if (!(met & (uint64_t{1} << p))) out.push_back(phrases_[p][partial(phrases_[p], tokens, -1)]);
}

}  // namespace transduce
