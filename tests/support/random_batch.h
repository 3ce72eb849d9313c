// A batch of random token ids shaped as training batches are: sentences of several lengths,
// right-padded, the decoder's input starting with BOS and its labels ending in EOS.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "model/transformer.h"

namespace transduce::testing {

// `sentences` rows of `length` positions over ids [4, vocab): sentence s has length - s % 5 source
// tokens and length - s % 3 target tokens (the last EOS), the rest padding.
Batch random_padded_batch(SplitMix64& rng, int64_t sentences, int64_t length, int vocab);

}  // namespace transduce::testing
