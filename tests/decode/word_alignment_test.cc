// Word alignments from attention (decode/word_alignment.h) on hand-made weights: the most attended
// source piece per target piece, summed over heads, EOS left out; pieces grouped into words at
// SentencePiece's word-boundary mark.
#include "decode/word_alignment.h"

#include <gtest/gtest.h>

namespace transduce {
namespace {

TEST(WordAlignment, EachTargetPieceTakesTheSourcePieceItsHeadsAttendToMost) {
  // 2 heads, 3 target positions (the last is EOS), 4 source positions (the last is EOS).
  const float w[2][3][4] = {{{0.1f, 0.6f, 0.2f, 0.1f}, {0.3f, 0.1f, 0.3f, 0.3f}, {0, 0, 0, 1}},
                            {{0.5f, 0.2f, 0.2f, 0.1f}, {0.1f, 0.1f, 0.2f, 0.6f}, {1, 0, 0, 0}}};
  Tensor cross = Tensor::empty({2, 3, 4}, DType::F32);
  std::copy(&w[0][0][0], &w[0][0][0] + 24, cross.f32());
  // Query 0: sums 0.6, 0.8, 0.4 (EOS's 0.2 left out) -> 1. Query 1: 0.4, 0.2, 0.5 (EOS's 0.9
  // left out) -> 2. Query 2 is EOS: no alignment.
  EXPECT_EQ(piece_alignment(cross), (std::vector<int64_t>{1, 2}));
}

TEST(WordAlignment, PiecesAreGroupedIntoWordsAtTheBoundaryMark) {
  EXPECT_EQ(word_of_pieces({"\u2581Ein", "\u2581Hund", "e", "s", "\u2581l\u00e4uft", "."}),
            (std::vector<int64_t>{0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(word_of_pieces({"ab", "c", "\u2581d"}), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_TRUE(word_of_pieces({}).empty());
  EXPECT_EQ(pharaoh({{0, 0}, {1, 2}, {2, 1}}), "0-0 1-2 2-1");
  EXPECT_EQ(pharaoh({}), "");
}

}  // namespace
}  // namespace transduce
