#include "support/random_batch.h"

#include "text/special_ids.h"

namespace transduce::testing {

Batch random_padded_batch(SplitMix64& rng, int64_t sentences, int64_t length, int vocab) {
  Batch batch{Tensor::empty({sentences, length}, DType::I32),
              Tensor::empty({sentences, length}, DType::I32),
              Tensor::empty({sentences, length}, DType::I32)};
  for (int64_t s = 0; s < sentences; ++s) {
    const int64_t src_len = length - s % 5, tgt_len = length - s % 3;
    int32_t* src = batch.src.i32() + s * length;
    int32_t* in = batch.tgt_in.i32() + s * length;
    int32_t* out = batch.tgt_out.i32() + s * length;
    for (int64_t t = 0; t < length; ++t) {
      src[t] = t < src_len ? static_cast<int32_t>(rng.randint(4, vocab - 1)) : kPadId;
      out[t] = t < tgt_len - 1 ? static_cast<int32_t>(rng.randint(4, vocab - 1))
                               : (t == tgt_len - 1 ? kEosId : kPadId);
    }
    for (int64_t t = 0; t < length; ++t)
      in[t] = t == 0 ? kBosId : (t < tgt_len ? out[t - 1] : kPadId);
  }
  return batch;
}

}  // namespace transduce::testing
