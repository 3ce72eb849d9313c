#include "model/kv_cache.h"

#include "core/error.h"

namespace transduce {

namespace {

Tensor index_tensor(const std::vector<int32_t>& rows) {
  Tensor index = Tensor::empty({static_cast<int64_t>(rows.size())}, DType::I32);
  std::copy(rows.begin(), rows.end(), index.i32());
  return index;
}

}  // namespace

void DecoderCache::select(const std::vector<int32_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size()), before = this->rows();
  TD_CHECK(n % group == 0, "cache select of {} rows in groups of {}", n, group);
  std::vector<int32_t> kept;  // sentences, in order
  for (int64_t g = 0; g < n / group; ++g) {
    const int32_t s = static_cast<int32_t>(rows[g * group] / group);
    for (int64_t j = 0; j < group; ++j)
      TD_CHECK(rows[g * group + j] >= 0 && rows[g * group + j] < before &&
                   rows[g * group + j] / group == s,
               "cache select of row {} into a group of sentence {} ({} rows)", rows[g * group + j],
               s, before);
    TD_CHECK(g == 0 || s > kept.back(), "cache select reorders sentences");
    kept.push_back(s);
  }
  // Row i's past is row rows[i]'s: only the slot numbers move.
  const int64_t slots = history.slots();
  int32_t* h = history.slot_of.i32();
  std::vector<int32_t> moved(static_cast<size_t>(n));
  for (int64_t t = 0; t < length; ++t) {
    int32_t* at = h + t * slots;
    for (int64_t i = 0; i < n; ++i) moved[i] = at[rows[i]];
    std::copy(moved.begin(), moved.end(), at);
  }
  if (static_cast<int64_t>(kept.size()) == sentences()) return;  // the same sentences, in order
  // Sentences left the batch: the per-sentence tensors keep their rows, moved down in place.
  const Tensor sentence_index = index_tensor(kept);
  auto compact = [&](ops::HeadVectors& t) {
    t.data = ops::compact_rows(t.data, sentence_index);
    if (t.scales.defined()) t.scales = ops::compact_rows(t.scales, sentence_index);
  };
  for (LayerCache& l : layers) {
    compact(l.cross_keys);
    compact(l.cross_values);
  }
  src_pad = ops::compact_rows(src_pad, sentence_index);
}

void DecoderCache::begin_position() {
  TD_CHECK(length < capacity, "position {} of a cache for {}", length, capacity);
  int32_t* at = history.slot_of.i32() + length * history.slots();
  for (int64_t r = 0; r < rows(); ++r) at[r] = static_cast<int32_t>(r);
}

void DecoderCache::share_first_position() {
  TD_CHECK(length == 1, "sharing the first position of a cache at position {}", length);
  int32_t* at = history.slot_of.i32();
  for (int64_t r = 0; r < rows(); ++r) at[r] = static_cast<int32_t>(r / group);
}

}  // namespace transduce
