// The search options (decode/search.h) declared once: `transduce translate`, attention, parse,
// serve, score-pairs and the benchmarks take their flags from this list, the service its request
// fields, the Python module its keyword arguments, and parse.json its decoding settings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/option_spec.h"
#include "decode/search.h"

namespace transduce {

using SearchOptionSpec = OptionSpec<SearchOptions>;

// beam, alpha, max_len_a/b, min_len_a/b, nbest, no_repeat_ngram, repetition_penalty, sampling,
// temperature, seed, alternatives, ensemble_mean, max_input_len, long_input.
const std::vector<SearchOptionSpec>& search_option_specs();

// How many outputs each sentence gets: `alternatives` when above 0, else nbest (beam search's
// best, or samples).
int64_t outputs_per_sentence(const SearchOptions& options);
// Fails in one line where options contradict each other: nbest above the beam for beam search.
void check_search_options(const SearchOptions& options);

// `overrides` (a JSON object of search option keys) written over `options`; an unknown key, or a
// value of the wrong kind or out of range, fails in one line naming the key.
void apply_search_options(const nlohmann::json& overrides, SearchOptions& options);

// The options of `options` named by `keys`, as a JSON object.
nlohmann::json search_options_json(const SearchOptions& options,
                                   const std::vector<std::string>& keys);

}  // namespace transduce
