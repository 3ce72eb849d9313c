#include "model/kv_cache.h"

#include "core/error.h"
#include "ops/ops.h"

namespace transduce {

namespace {

Tensor index_tensor(const std::vector<int32_t>& rows) {
  Tensor index = Tensor::empty({static_cast<int64_t>(rows.size())}, DType::I32);
  std::copy(rows.begin(), rows.end(), index.i32());
  return index;
}

}  // namespace

void DecoderCache::select(const std::vector<int32_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  TD_CHECK(n % group == 0, "cache select of {} rows in groups of {}", n, group);
  std::vector<int32_t> kept;  // sentences, in order
  for (int64_t g = 0; g < n / group; ++g) {
    const int32_t s = static_cast<int32_t>(rows[g * group] / group);
    for (int64_t j = 1; j < group; ++j)
      TD_CHECK(rows[g * group + j] / group == s, "cache select mixes sentences {} and {}", s,
               rows[g * group + j] / group);
    TD_CHECK(g == 0 || s > kept.back(), "cache select reorders sentences");
    kept.push_back(s);
  }
  const Tensor index = index_tensor(rows);
  for (LayerCache& l : layers) {
    // Only the filled positions of the self-attention caches are worth copying.
    const int other = 1 - l.current;
    Tensor keys = l.key_buffers[other].slice_rows(0, n);
    Tensor values = l.value_buffers[other].slice_rows(0, n);
    ops::gather_rows(l.self_keys, index, keys, length * keys.dim(2));
    ops::gather_rows(l.self_values, index, values, length * values.dim(2));
    l.self_keys = keys;
    l.self_values = values;
    l.current = other;
  }
  if (static_cast<int64_t>(kept.size()) == sentences()) return;  // the same sentences, in order
  // Sentences left the batch: the per-sentence tensors keep their rows, moved down in place.
  const Tensor sentence_index = index_tensor(kept);
  for (LayerCache& l : layers) {
    l.cross_keys = ops::compact_rows(l.cross_keys, sentence_index);
    l.cross_values = ops::compact_rows(l.cross_values, sentence_index);
  }
  src_pad = ops::compact_rows(src_pad, sentence_index);
}

}  // namespace transduce
