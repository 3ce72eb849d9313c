// Greedy and beam search over the incremental decoder (section 6.1): beam size 4, the GNMT length
// penalty lp(Y) = ((5 + |Y|) / 6)^alpha with alpha 0.6, outputs at most a * |source| + b tokens,
// and a sentence stops as soon as no live hypothesis can beat its finished ones. Around them, the
// controls translation users build on: target prefixes, random sampling, alternatives at a
// position, minimum lengths, n-gram blocking and a repetition penalty.
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

// Drawing each token at random instead of searching: from the k most probable tokens (top-k), or
// from the fewest most probable tokens whose probabilities sum to at least p (nucleus, top-p).
struct Sampling {
  enum class Kind { kNone, kTopK, kTopP };
  Kind kind = Kind::kNone;
  int k = 0;       // kTopK
  float p = 1.0f;  // kTopP, in (0, 1]
  bool on() const { return kind != Kind::kNone; }
};

// What becomes of a source longer than SearchOptions::max_input_len.
enum class LongInput { kRefuse, kTruncate };

struct SearchOptions {
  int beam = 4;
  float alpha = 0.6f;
  float max_len_a = 1.0f;  // output tokens (EOS excluded) <= a * source tokens + b
  int max_len_b = 50;
  // Output tokens (EOS excluded) >= a * source tokens + b, below the maximum: by default one, so
  // that an empty output never wins for a non-empty source (as in CTranslate2).
  float min_len_a = 0.0f;
  int min_len_b = 1;
  int nbest = 1;
  // No n-gram of this many tokens appears twice in an output (0: off).
  int no_repeat_ngram = 0;
  // CTRL's penalty (Keskar et al. 2019): the scores of tokens already in the output are divided by
  // it where positive and multiplied by it where negative, before they are normalised (1: off).
  float repetition_penalty = 1.0f;
  // With sampling on, each sentence gets `nbest` independent samples (the beam is not used), each
  // token drawn from the step's probabilities raised to 1 / temperature and renormalised over the
  // kept tokens; the draws come from `seed`, the sentence's id, the sample and the step alone.
  Sampling sampling;
  float temperature = 1.0f;
  int64_t seed = 0;
  // Above 0: the `alternatives` most probable tokens at the first position after the prefix, each
  // completed greedily (or by sampling) to the end: that many outputs, in the order of their
  // first token's probability (CTranslate2's return_alternatives). The beam is not used.
  int alternatives = 0;
  EnsembleMean ensemble = EnsembleMean::kProbabilities;  // several models only
  // A source of more subword pieces than max_input_len (0: than the model takes) is refused or
  // cut to it, as long_input says. Held where text becomes pieces (decode/input_limit.h: the
  // translator, score-pairs, the service); the search itself is given sources that fit.
  int64_t max_input_len = 0;
  LongInput long_input = LongInput::kRefuse;
  // Called on each hypothesis's log-probabilities over the vocabulary before a choice is made, to
  // ban (-inf) or force tokens: (sentence index in the batch, the hypothesis's tokens so far, whose
  // count is the step, row of V log-probabilities). A search works on a step's sentences in
  // parallel: calls for different sentences may run at once, on different threads.
  std::function<void(int64_t sentence, std::span<const int32_t> prefix, float* logprobs)> constrain;
};

// What a search is given for each sentence besides its source.
struct SentenceControls {
  SentenceControls(std::vector<int32_t> prefix = {}, uint64_t id = 0,
                   std::vector<std::vector<int32_t>> constraints = {})
      : prefix(std::move(prefix)), id(id), constraints(std::move(constraints)) {}

  // The output starts with these pieces (no PAD, BOS or EOS): they are forced, their
  // log-probabilities counted, and the search goes on from them.
  std::vector<int32_t> prefix;
  // Sampling's random draws for this sentence come from (seed, id): its number in the input, so
  // that a sentence gets the same samples whatever batch it is in.
  uint64_t id = 0;
  // Phrases (in pieces) every output must hold (lexically constrained beam search with dynamic
  // beam allocation, Post & Vilar 2018). A sentence none of whose outputs can hold them all within
  // the length limit gets no hypothesis.
  std::vector<std::vector<int32_t>> constraints;
};

struct Hypothesis {
  std::vector<int32_t> tokens;         // without EOS
  float log_prob = 0;                  // sum over the tokens and EOS
  float score = 0;                     // log_prob / lp(|tokens| + 1): the length counts EOS
  std::vector<float> token_log_probs;  // one per token, then EOS's
};

// ((5 + length) / 6)^alpha.
float length_penalty(int64_t length, float alpha);
// The most output tokens (EOS excluded) for a source of `source_tokens` tokens.
int64_t max_output_length(int64_t source_tokens, const SearchOptions& options);
// What the search allows a source of `source_tokens` tokens (EOS counted): max_output_length,
// within the model's positions (EOS needs one too).
int64_t output_limit(const ModelConfig& config, int64_t source_tokens,
                     const SearchOptions& options);
// The fewest output tokens (EOS excluded) for a source of `source_tokens` tokens, before the
// maximum caps it.
int64_t min_output_length(int64_t source_tokens, const SearchOptions& options);

// Where a search keeps the encoder output with the decoder cache, the decoder's self-attention
// history, and each step's activations. Passing the same arenas to every batch reuses their
// memory instead of asking the system again.
struct SearchArenas {
  Arena encode, history, step;
};

// src: I32 [B, Ls], right-padded with PAD. For each sentence, up to `nbest` hypotheses, best first.
// `models` is an ensemble (one model, or several sharing one vocabulary), combined at each step as
// options.ensemble says; the output limit is the tightest of theirs. `arenas`: one set per model,
// or none (the search makes its own). `controls`: one per sentence, or none.
//
// The beam stays k wide: each step takes the best 2k continuations of the k live hypotheses;
// those among the first k that end are finished, and the best k that do not are the next live
// ones (fairseq's rule), until no live hypothesis can beat the nbest-th finished one.
//
// With constraints, EOS is banned until every phrase is met, each live hypothesis also offers the
// tokens that take an unmet phrase further, and the k places are shared among banks by how many
// constraint tokens a hypothesis has produced (dynamic beam allocation: k / (C + 1) places each
// for C constraint tokens, the rest to the fullest banks, and places a bank leaves empty to the
// best candidates left). Every ending that meets all constraints is finished.
std::vector<std::vector<Hypothesis>> beam_search(std::span<Transformer* const> models,
                                                 const Tensor& src, const SearchOptions& options,
                                                 std::span<SearchArenas> arenas = {},
                                                 std::span<const SentenceControls> controls = {});
// Picks the most probable token at every step (no length penalty in the choice; the score is
// normalised the same way). Uses every option but the beam, nbest, sampling and alternatives.
std::vector<Hypothesis> greedy_search(std::span<Transformer* const> models, const Tensor& src,
                                      const SearchOptions& options,
                                      std::span<SearchArenas> arenas = {},
                                      std::span<const SentenceControls> controls = {});
// What options ask for: samples (sampling on), alternatives (alternatives > 0), greedy search
// (beam 1, nbest 1), or beam search.
std::vector<std::vector<Hypothesis>> search(std::span<Transformer* const> models, const Tensor& src,
                                            const SearchOptions& options,
                                            std::span<SearchArenas> arenas = {},
                                            std::span<const SentenceControls> controls = {});

// One model.
inline std::vector<std::vector<Hypothesis>> beam_search(
    Transformer& model, const Tensor& src, const SearchOptions& options,
    SearchArenas* arenas = nullptr, std::span<const SentenceControls> controls = {}) {
  Transformer* const one[] = {&model};
  return beam_search(one, src, options,
                     arenas ? std::span<SearchArenas>(arenas, 1) : std::span<SearchArenas>(),
                     controls);
}
inline std::vector<Hypothesis> greedy_search(Transformer& model, const Tensor& src,
                                             const SearchOptions& options,
                                             SearchArenas* arenas = nullptr,
                                             std::span<const SentenceControls> controls = {}) {
  Transformer* const one[] = {&model};
  return greedy_search(one, src, options,
                       arenas ? std::span<SearchArenas>(arenas, 1) : std::span<SearchArenas>(),
                       controls);
}

}  // namespace transduce
