// One training pair as token ids, without BOS/EOS (batches add them).
#pragma once

#include <cstdint>
#include <vector>

namespace transduce {

struct Example {
  std::vector<int32_t> src;
  std::vector<int32_t> tgt;
};

// Reserved ids, shared by the vocabulary (SentencePiece is trained to use them) and the model.
inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kBosId = 1;
inline constexpr int32_t kEosId = 2;
inline constexpr int32_t kUnkId = 3;

}  // namespace transduce
