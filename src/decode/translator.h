// Translating text: subword encoding, length-sorted batches, search, and decoding back to text,
// with results in input order.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "decode/attention_maps.h"
#include "decode/search.h"
#include "decode/word_alignment.h"
#include "text/tokenizer.h"

namespace transduce {

struct TranslateOptions {
  SearchOptions search;         // beam 1 runs greedy search
  int64_t batch_tokens = 4000;  // source tokens per batch, padding counted
  bool attention = false;       // the best translation of each sentence carries its attention
  bool alignment = false;       // every translation carries its word alignment
};

struct Translation {
  std::string text;
  std::vector<int32_t> tokens;
  float score = 0;                     // length-normalised log-probability
  float log_prob = 0;                  // the sum of token_log_probs
  std::vector<float> token_log_probs;  // one per token, then EOS's
  std::optional<AttentionMaps> attention;
  WordAlignment alignment;  // with TranslateOptions::alignment
  // No output holds every constraint within the length limit: this empty translation stands in.
  bool constraints_unmet = false;
};

// The search over sentences already in pieces (without EOS), in batches of similar length of at
// most `batch_tokens` source tokens (padding counted): for each, what search() finds (up to
// search.nbest hypotheses, best first), in input order. An empty source gets one empty hypothesis
// without touching the model; each must fit the model (max_positions - 1 pieces). A constraint in
// `search` gets the index of the sentence in `sources`. `models`: one, or an ensemble (see
// beam_search), with one set of arenas each or none. `controls`: one per source or none (then
// each sentence's id is its index).
// The most pieces a source may have for every one of `models` (EOS is added to them).
int64_t source_limit(std::span<Transformer* const> models);

std::vector<std::vector<Hypothesis>> search_sources(
    std::span<Transformer* const> models, const std::vector<std::vector<int32_t>>& sources,
    const SearchOptions& search, int64_t batch_tokens, std::span<SearchArenas> arenas = {},
    std::span<const SentenceControls> controls = {});
inline std::vector<std::vector<Hypothesis>> search_sources(
    Transformer& model, const std::vector<std::vector<int32_t>>& sources,
    const SearchOptions& search, int64_t batch_tokens, SearchArenas* arenas) {
  Transformer* const one[] = {&model};
  return search_sources(one, sources, search, batch_tokens,
                        arenas ? std::span<SearchArenas>(arenas, 1) : std::span<SearchArenas>());
}

class Translator {
 public:
  Translator(Transformer& model, const Tokenizer& tokenizer, TranslateOptions options);
  // An ensemble: models of one vocabulary (`tokenizer`'s) whose probabilities are averaged at
  // every step (see beam_search). Attention maps come from the first.
  Translator(std::vector<Transformer*> models, const Tokenizer& tokenizer,
             TranslateOptions options);

  // Translates `lines`; for each, up to nbest translations, best first. An empty (or blank)
  // line gives one empty translation without touching the model. A line over the input limit
  // (decode/input_limit.h) is refused naming its line number (first_line + index), or cut with a
  // warning through `warn`.
  // `prefixes`: none, or one per line (blank: none), text each translation starts with;
  // `constraints`: none, or one list of phrases per line that every translation must hold (a
  // line none of whose outputs can hold them gets a warning and an empty translation). Line
  // first_line + i is sentence id first_line - 1 + i (sampling's draws).
  std::vector<std::vector<Translation>> translate(
      const std::vector<std::string>& lines, int64_t first_line = 1,
      const std::function<void(const std::string&)>& warn = nullptr,
      const std::vector<std::string>& prefixes = {},
      const std::vector<std::vector<std::string>>& constraints = {});
  // The same for sentences already in pieces (without EOS), with other options: an empty one
  // gives one empty translation; one over the input limit is refused as "sources[i]", or cut. A
  // constraint in options.search gets the index of the sentence in `sources`.
  std::vector<std::vector<Translation>> translate_pieces(
      const std::vector<std::vector<int32_t>>& sources, const TranslateOptions& options,
      std::span<const SentenceControls> controls = {});

  // The most pieces a source may have (EOS is added to them).
  int64_t source_limit() const;
  const TranslateOptions& options() const { return options_; }
  // What translate() uses from now on (checked as the constructor checks them).
  void set_options(TranslateOptions options);
  const Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  std::vector<Transformer*> models_;
  const Tokenizer& tokenizer_;
  TranslateOptions options_;
  std::unique_ptr<SearchArenas[]> arenas_;  // one set per model, reused by every batch
};

}  // namespace transduce
