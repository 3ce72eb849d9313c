// Scoring given translations (force decoding, as marian-scorer and fairseq's --score-reference
// do): the model's log-probability of each target given its source, token by token, for n-best
// rescoring and data filtering.
#pragma once

#include <vector>

#include "model/transformer.h"

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

}  // namespace transduce
