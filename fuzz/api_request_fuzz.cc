// The HTTP API's request bodies: parse_translate_request (src/serve/api.h), the function the
// server's POST /v1/translate calls, with the server's default limits and a small vocabulary.
// A refused request must be an ApiError (which the server answers as JSON); any other exception
// would escape the handler.
#include <cstddef>
#include <cstdint>
#include <string>

#include "decode/input_limit.h"
#include "decode/search_options.h"
#include "fuzz_support.h"
#include "serve/api.h"
#include "text/tokenizer.h"

using namespace transduce;

// Trained before the first input, so that a failure there is not blamed on one.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::small_tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tokenizer& tok = fuzz::small_tokenizer();
  const ServiceLimits limits;
  const TranslateOptions defaults;
  TranslateRequest r;
  try {
    r = parse_translate_request(std::string(fuzz::as_text(data, size)), tok, limits, defaults);
  } catch (const ApiError& e) {
    // What the server sends back (http_server.cc's send_json).
    (void)error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (e.status != 400 && e.status != 413) fuzz::violated("a refusal that is neither 400 nor 413");
    return 0;
  }
  const SearchOptions& s = r.options.search;
  if (r.text.size() != r.sources.size() ||
      static_cast<int64_t>(r.text.size()) > limits.max_sentences || s.beam < 1 ||
      s.beam > limits.max_beam || s.nbest < 1 || (s.nbest > s.beam && !s.sampling.on()) ||
      outputs_per_sentence(s) > limits.max_beam || !(s.alpha >= 0) || !(s.alpha <= 10) ||
      s.max_input_len < 0 || s.max_input_len > limits.max_sentence_tokens)
    fuzz::violated("parse_translate_request accepted a request outside the limits");
  // Every accepted sentence within the input limit (cut to it, or refused, as long_input says).
  for (const auto& ids : r.sources)
    if (static_cast<int64_t>(ids.size()) > input_limit(s, limits.max_sentence_tokens))
      fuzz::violated("a sentence over the input limit was accepted");
  return 0;
}
