// The decoding benchmark of ../shared/BENCHMARKS.md ("Decoding"): 500 synthetic sources, sorted by
// length and cut into batches of 100, translated with a forced output length (every output is
// exactly as long as its source) by beam search or greedy search, timed after one warm-up batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/phase_clock.h"
#include "decode/search.h"
#include "model/config.h"
#include "model/transformer.h"

namespace transduce::bench {

// BENCHMARKS.md's default workload: 500 sources of 15..25 words from splitmix64(1), 10,058 words
// in all; each source also ends in EOS (see make_decode_sources), and each output is its
// source's words' count of tokens plus EOS: 10,558 output tokens.
inline constexpr int kDecodeSentences = 500;
inline constexpr int64_t kDecodeSourceWords = 10058;
inline constexpr int64_t kDecodeOutputTokens = 10558;

// The sources' words (no EOS), in draw order. One SplitMix64(seed) stream: for each sentence,
// L = randint(min_len, max_len), then L words randint(4, vocab - 1).
std::vector<std::vector<int32_t>> make_decode_sources(int sentences = kDecodeSentences,
                                                      int vocab = 8000, uint64_t seed = 1,
                                                      int min_len = 15, int max_len = 25);

// Indices of `sources`, longest first; sources of equal length keep their draw order (stable).
std::vector<int64_t> length_order(const std::vector<std::vector<int32_t>>& sources);

// The I32 source tensor [B, Lmax + 1] of sources[order[begin..end)]: each row its words, then EOS,
// then PAD up to the longest row.
Tensor make_source_batch(const std::vector<std::vector<int32_t>>& sources,
                         const std::vector<int64_t>& order, int64_t begin, int64_t end);

// Forces output lengths through SearchOptions::constrain: sentence s of the batch (row s of its
// source tensor) may not end before step lengths[s] and must end (EOS only) at that step.
void force_output_lengths(SearchOptions& options, std::vector<int64_t> lengths, int64_t vocab);

struct TranslateBenchOptions {
  int sentences = kDecodeSentences;
  int batch_sentences = 100;
  bool greedy = false;  // greedy_search (reported as beam 1); otherwise beam_search with `beam`
  // The beam, the length penalty and the output length limit, which only sizes the decoder cache
  // here and must leave room for the forced length (the run fails otherwise).
  SearchOptions search;
  uint64_t data_seed = 1;  // the sources
  // Source lengths in words, drawn uniformly (the default workload's 15..25; long inputs for
  // restricted self-attention).
  int min_words = 15, max_words = 25;
  int warmup_batches = 1;  // the first batches, translated once untimed before the timed run
};

struct TranslateBenchResult {
  std::string search;  // "beam" or "greedy"
  int beam = 0;        // 1 for greedy
  int threads = 0;
  int64_t sentences = 0;
  int64_t batches = 0;
  int64_t source_words = 0;           // without EOS
  int64_t source_tokens = 0;          // what the encoder sees: words + one EOS per sentence
  int64_t output_tokens = 0;          // EOS included
  std::vector<double> batch_seconds;  // each timed batch, encoder included, longest batch first
  double seconds = 0;                 // all timed batches
  double sentences_per_second = 0;
  double tokens_per_second = 0;  // output tokens (EOS included) per second
  // Per source, in draw order: the words the search produced (EOS excluded). The run fails
  // unless each has as many as its source.
  std::vector<int64_t> output_lengths;
  // Where the timed batches' time went (core/phase_clock.h), and the decoder steps they took.
  PhaseTimes phases;
  int64_t steps = 0;
};

// Translates the workload with `model` as it is (the caller initialises its weights). Throws when
// an output's length is not its source's, or, for the default workload (500 sentences of 15..25
// words from seed 1), when the output tokens are not 10,558.
TranslateBenchResult run_translate_bench(Transformer& model, const TranslateBenchOptions& options);

}  // namespace transduce::bench
