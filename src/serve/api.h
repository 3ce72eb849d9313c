// The JSON API of the translation service, apart from the sockets: reading and checking a
// translation request, and writing answers and errors. Every refusal is an ApiError carrying the
// HTTP status, a message naming what is wrong and where, and the limit it hit, if any.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/translator.h"

namespace transduce {

struct ServiceLimits {
  int64_t max_body_bytes = 1 << 20;
  int64_t max_sentences = 64;         // per request
  int64_t max_sentence_tokens = 256;  // subword pieces of one sentence
  int max_beam = 16;
};

// Arrays and objects in a request body nest at most this deep ({"text": [...]} is 2).
inline constexpr int kMaxJsonDepth = 16;
// A sentence longer than max_sentence_tokens * kBytesPerToken bytes is refused without splitting
// it into pieces. SentencePiece's pieces hold at most 16 characters (its default, which
// `transduce vocab` keeps) of at most 4 bytes, so such a sentence has more pieces than the limit
// unless it is mostly runs of spaces or characters outside the vocabulary.
inline constexpr int64_t kBytesPerToken = 64;
int64_t max_sentence_bytes(const ServiceLimits& limits);

class ApiError : public std::runtime_error {
 public:
  // `limit` names the server option that was exceeded ("" when none), `max` its value.
  ApiError(int status, const std::string& message, std::string limit = "", int64_t max = 0)
      : std::runtime_error(message), status(status), limit(std::move(limit)), max(max) {}
  int status;
  std::string limit;
  int64_t max;
};

// {"error": {"status": 400, "message": "...", "limit": "max_sentences", "max": 64}}; the limit
// fields only when a limit was hit.
nlohmann::json error_json(const ApiError& e);

struct TranslateRequest {
  std::vector<std::string> text;              // the sentences as sent
  std::vector<std::vector<int32_t>> sources;  // their pieces (empty for a blank sentence)
  // Each sentence's target prefix in pieces and its index in the request (sampling's id).
  std::vector<SentenceControls> controls;
  TranslateOptions options;  // defaults overridden by the request
};

// The search options (decode/search_options.h) a request may set, by their keys: all but the
// ensemble's rule, which is the server's.
inline const std::vector<std::string> kRequestSearchOptions = {
    "beam",        "alpha", "max_len_a",       "max_len_b",          "min_len_a",
    "min_len_b",   "nbest", "no_repeat_ngram", "repetition_penalty", "sampling",
    "temperature", "seed",  "alternatives",    "max_input_len",      "long_input"};
bool is_request_search_option(std::string_view key);

// Reads {"text": "..." | ["...", ...], "target_prefix": "..." | ["...", ...], "beam": 4,
// "alpha": 0.6, "nbest": 1, "attention": false, "alignment": false} and the other search options of
// kRequestSearchOptions (only "text" is required; a prefix for each text, "" for none). The rows
// a sentence costs (the beam, samples, alternatives) are at most max_beam, max_input_len at most
// max_sentence_tokens. Malformed JSON, a field of the wrong type or value, or an unknown field
// is a 400; too many sentences a 413. A sentence over the input limit (max_input_len, else
// max_sentence_tokens) is a 400 or, with long_input truncate, cut to it (one of more bytes than
// max_sentence_bytes is cut to them first, at a character's start).
TranslateRequest parse_translate_request(const std::string& body, const Tokenizer& tokenizer,
                                         const ServiceLimits& limits,
                                         const TranslateOptions& defaults);

// A float as JSON should show it: the shortest decimal that reads back as the same float (0.6, not
// 0.6000000238418579).
double json_float(float x);

// One translation as the service and `translate --output-format json` write it: {"text", "score",
// "log_prob", "tokens" (pieces), "token_log_probs" (one per token, then EOS's)}, with
// "alignment": [[source word, target word], ...] when `alignment`, and "constraints_unmet": true
// where no output could hold the constraints.
nlohmann::json translation_json(const Translation& t, const Tokenizer& tokenizer,
                                bool alignment = false);

// One sentence of an attention file (`transduce translate --attention`, `transduce attention`):
// {"line", "source", "translation", "score", "attention": {...} or null}.
nlohmann::json attention_file_sentence(int64_t line, const std::string& source,
                                       const Translation& best, const Tokenizer& tokenizer);

// {"translations": [{"text", "score", "tokens", ["nbest": [{"text", "score", "tokens"}...]],
// ["attention": {...}]}, ...], "model": name}: one entry per sentence, in request order.
nlohmann::json translate_response(const TranslateRequest& request,
                                  const std::vector<std::vector<Translation>>& results,
                                  const Tokenizer& tokenizer, const std::string& model_name);

}  // namespace transduce
