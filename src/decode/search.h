// Greedy and beam search over the incremental decoder (section 6.1): beam size 4, the GNMT length
// penalty lp(Y) = ((5 + |Y|) / 6)^alpha with alpha 0.6, outputs at most a * |source| + b tokens,
// and a sentence stops as soon as no live hypothesis can beat its finished ones.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "model/transformer.h"

namespace transduce {

// How an ensemble's models are combined at each step: the mean of their probabilities (fairseq's
// rule), or the mean of their log-probabilities (OpenNMT-py's; then a hypothesis's log_prob is
// the mean of the models' log-probabilities of it).
enum class EnsembleMean { kProbabilities, kLogProbabilities };

struct SearchOptions {
  int beam = 4;
  float alpha = 0.6f;
  float max_len_a = 1.0f;  // output tokens (EOS excluded) <= a * source tokens + b
  int max_len_b = 50;
  int nbest = 1;
  EnsembleMean ensemble = EnsembleMean::kProbabilities;  // several models only
  // Called on each hypothesis's log-probabilities over the vocabulary before a choice is made, to
  // ban (-inf) or force tokens: (sentence index in the batch, the hypothesis's tokens so far, whose
  // count is the step, row of V log-probabilities). A search works on a step's sentences in
  // parallel: calls for different sentences may run at once, on different threads.
  std::function<void(int64_t sentence, std::span<const int32_t> prefix, float* logprobs)> constrain;
};

struct Hypothesis {
  std::vector<int32_t> tokens;  // without EOS
  float log_prob = 0;           // sum over the tokens and EOS
  float score = 0;              // log_prob / lp(|tokens| + 1): the length counts EOS
};

// ((5 + length) / 6)^alpha.
float length_penalty(int64_t length, float alpha);
// The most output tokens (EOS excluded) for a source of `source_tokens` tokens.
int64_t max_output_length(int64_t source_tokens, const SearchOptions& options);
// What the search allows a source of `source_tokens` tokens (EOS counted): max_output_length,
// within the model's positions (EOS needs one too).
int64_t output_limit(const ModelConfig& config, int64_t source_tokens,
                     const SearchOptions& options);

// Where a search keeps the encoder output with the decoder cache, the decoder's self-attention
// history, and each step's activations. Passing the same arenas to every batch reuses their
// memory instead of asking the system again.
struct SearchArenas {
  Arena encode, history, step;
};

// src: I32 [B, Ls], right-padded with PAD. For each sentence, up to `nbest` hypotheses, best first.
// `models` is an ensemble (one model, or several sharing one vocabulary), combined at each step as
// options.ensemble says; the output limit is the tightest of theirs. `arenas`: one set per model,
// or none (the search makes its own).
std::vector<std::vector<Hypothesis>> beam_search(std::span<Transformer* const> models,
                                                 const Tensor& src, const SearchOptions& options,
                                                 std::span<SearchArenas> arenas = {});
// Picks the most probable token at every step (no length penalty in the choice; the score is
// normalised the same way). Uses options.max_len_a/b, alpha and constrain.
std::vector<Hypothesis> greedy_search(std::span<Transformer* const> models, const Tensor& src,
                                      const SearchOptions& options,
                                      std::span<SearchArenas> arenas = {});

// One model.
inline std::vector<std::vector<Hypothesis>> beam_search(Transformer& model, const Tensor& src,
                                                        const SearchOptions& options,
                                                        SearchArenas* arenas = nullptr) {
  Transformer* const one[] = {&model};
  return beam_search(one, src, options,
                     arenas ? std::span<SearchArenas>(arenas, 1) : std::span<SearchArenas>());
}
inline std::vector<Hypothesis> greedy_search(Transformer& model, const Tensor& src,
                                             const SearchOptions& options,
                                             SearchArenas* arenas = nullptr) {
  Transformer* const one[] = {&model};
  return greedy_search(one, src, options,
                       arenas ? std::span<SearchArenas>(arenas, 1) : std::span<SearchArenas>());
}

}  // namespace transduce
