// The attention weights behind one translation, as in the paper's Figures 3-5: every layer's and
// every head's encoder self-attention, decoder self-attention and encoder-decoder attention.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/transformer.h"

namespace transduce {

class Tokenizer;

// Decoder position i is fed target_input(i) (BOS, then the output so far) and produces target[i].
struct AttentionMaps {
  std::vector<int32_t> source;  // what the encoder read: the source's pieces, then EOS
  std::vector<int32_t> target;  // what each decoder position produced: the output, then EOS
  // One tensor per layer holding every head's weights, [heads, queries, keys]; each row sums to 1.
  std::vector<Tensor> encoder_self;  // [H, Ls, Ls]
  std::vector<Tensor> decoder_self;  // [H, Lt, Lt], zero above the diagonal
  std::vector<Tensor> cross;         // [H, Lt, Ls]

  std::vector<int32_t> target_input() const;
};

// Runs the model over `source` (EOS included) and an output it produced (`output`, without EOS)
// the way the search did: the encoder once, then one incremental decoder step per position over
// the key/value cache, through the same fused inference kernels, recording their weights.
AttentionMaps attention_maps(Transformer& model, const std::vector<int32_t>& source,
                             const std::vector<int32_t>& output);

// {"source_tokens", "target_tokens", "target_input_tokens": [piece strings], "source_ids",
//  "target_ids": [vocabulary ids], "encoder_self", "decoder_self", "cross": [layer][head][query]
//  [key] weights rounded to 1e-6}.
nlohmann::json attention_json(const AttentionMaps& maps, const Tokenizer& tokenizer);

}  // namespace transduce
