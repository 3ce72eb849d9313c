// Scoring given translations (force decoding, as marian-scorer and fairseq's --score-reference
// do): the model's log-probability of each target given its source, token by token, for n-best
// rescoring and data filtering.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"
#include "model/transformer.h"
#include "text/tokenizer.h"

namespace transduce {

struct PairScore {
  float log_prob = 0;                  // the sum over the target's tokens and EOS
  float score = 0;                     // log_prob / lp(tokens + 1, alpha): beam search's score
  std::vector<float> token_log_probs;  // one per target token, then EOS's
};

// Sources and targets in pieces, without EOS (EOS ends both, as in training; an empty one is
// EOS alone). A source or target longer than the model accepts is an error naming its index.
// Pairs are batched longest first, `batch_tokens` tokens a batch (padding counted); results come
// back in input order.
std::vector<PairScore> score_pairs(Transformer& model,
                                   const std::vector<std::vector<int32_t>>& sources,
                                   const std::vector<std::vector<int32_t>>& targets, float alpha,
                                   int64_t batch_tokens = 2000);

// Pairs of text in pieces for score_pairs, named by `where(side, index)` (side 0 the source, 1
// the target; "FILE:LINE", "targets[3]"). A source over the input limit of `input`
// (max_input_len, long_input: decode/input_limit.h) is refused or cut (with a warning through
// `warn`); a target longer than the model accepts is always refused, never cut: the score of a
// cut target would be another sentence's.
struct PiecePairs {
  std::vector<std::vector<int32_t>> sources, targets;
};
PiecePairs encode_pairs(const Tokenizer& tokenizer, const ModelConfig& config,
                        const std::vector<std::string>& sources,
                        const std::vector<std::string>& targets,
                        const std::function<std::string(int side, size_t index)>& where,
                        const SearchOptions& input = {},
                        const std::function<void(const std::string&)>& warn = nullptr);

}  // namespace transduce
