// Word alignments read from a translation's attention, as Garg et al. (2019) found best without
// training for it: the encoder-decoder attention of the penultimate decoder layer, averaged over
// its heads. Each output piece is aligned to the source piece it attends to most (EOS left out on
// both sides); a target word and a source word are aligned where any of their pieces are. Words
// are the pieces from one word-boundary mark (SentencePiece's "▁") to the next.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "decode/attention_maps.h"

namespace transduce {

class Tokenizer;

using WordAlignment = std::vector<std::pair<int64_t, int64_t>>;  // (source word, target word)

// The source piece (an index into the keys, EOS excluded) each target piece attends to most in
// `cross` [heads, Lt, Ls] averaged over heads; the last query (EOS) and the last key (EOS) are
// left out. Ties go to the earlier piece.
std::vector<int64_t> piece_alignment(const Tensor& cross);
// Each piece's word: a piece that starts with "▁" starts a new word (the first piece always does).
std::vector<int64_t> word_of_pieces(const std::vector<std::string>& pieces);
// The alignment of maps' translation, sorted by source word, then target word.
WordAlignment word_alignment(const AttentionMaps& maps, const Tokenizer& tokenizer);
// "0-0 1-2 2-1": Pharaoh's format, as fast_align and Marian write it.
std::string pharaoh(const WordAlignment& alignment);

}  // namespace transduce
