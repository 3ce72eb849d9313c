// One sentence pair as token ids, without BOS/EOS (batches add them): what training reads.
#pragma once

#include <cstdint>
#include <vector>

namespace transduce {

struct Example {
  std::vector<int32_t> src;
  std::vector<int32_t> tgt;
};

}  // namespace transduce
