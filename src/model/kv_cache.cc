#include "model/kv_cache.h"

#include "ops/ops.h"

namespace transduce {

namespace {

Tensor gathered(const Tensor& t, const Tensor& index, int64_t prefix) {
  Shape shape = t.shape();
  shape[0] = index.numel();
  Tensor out = Tensor::empty(shape, t.dtype());
  ops::gather_rows(t, index, out, prefix);
  return out;
}

}  // namespace

void DecoderCache::select(const std::vector<int32_t>& rows) {
  Tensor index = Tensor::empty({static_cast<int64_t>(rows.size())}, DType::I32);
  std::copy(rows.begin(), rows.end(), index.i32());
  for (LayerCache& l : layers) {
    // Only the filled positions of the self-attention caches are worth copying.
    l.self_keys = gathered(l.self_keys, index, length * l.self_keys.dim(2));
    l.self_values = gathered(l.self_values, index, length * l.self_values.dim(2));
    l.cross_keys = gathered(l.cross_keys, index, -1);
    l.cross_values = gathered(l.cross_values, index, -1);
  }
  src_pad = gathered(src_pad, index, -1);
}

}  // namespace transduce
