// The reserved token ids of every vocabulary: `transduce vocab` trains SentencePiece to give them
// these places (text/tokenizer.cc), and the model, the batches and the search rely on them.
#pragma once

#include <cstdint>

namespace transduce {

inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kBosId = 1;
inline constexpr int32_t kEosId = 2;
inline constexpr int32_t kUnkId = 3;

}  // namespace transduce
