#include "serve/api.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "decode/attention_maps.h"
#include "decode/input_limit.h"
#include "decode/search.h"
#include "decode/search_options.h"
#include "text/tokenizer.h"

namespace transduce {

namespace {

using nlohmann::json;

ApiError bad(const std::string& message) {
  return ApiError(400, message);
}

// "a string", "an array", ... as a message would say it.
std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

json pieces(const std::vector<int32_t>& ids, const Tokenizer& tokenizer) {
  json out = json::array();
  for (int32_t id : ids) out.push_back(tokenizer.piece(id));
  return out;
}

// A field that holds a string or an array of strings, as a list; `name` is how messages quote
// it ("\"text\"").
std::vector<std::string> strings_of(const json& v, const std::string& name) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        throw bad(fmt::format("{}[{}] must be a string, got {}", name, i, type_of(v[i])));
      out.push_back(v[i].get<std::string>());
    }
  } else {
    throw bad(fmt::format("{} must be a string or an array of strings, got {}", name, type_of(v)));
  }
  return out;
}

}  // namespace

int64_t max_sentence_bytes(const ServiceLimits& limits) {
  return limits.max_sentence_tokens * kBytesPerToken;
}

double json_float(float x) {
  if (!std::isfinite(x)) return x;
  return std::strtod(fmt::format("{}", x).c_str(), nullptr);
}

json translation_json(const Translation& t, const Tokenizer& tokenizer, bool alignment) {
  json token_log_probs = json::array();
  for (const float x : t.token_log_probs) token_log_probs.push_back(json_float(x));
  json j = {{"text", t.text},
            {"score", json_float(t.score)},
            {"log_prob", json_float(t.log_prob)},
            {"tokens", pieces(t.tokens, tokenizer)},
            {"token_log_probs", std::move(token_log_probs)}};
  if (alignment) {
    json pairs = json::array();
    for (const auto& [source, target] : t.alignment) pairs.push_back({source, target});
    j["alignment"] = std::move(pairs);
  }
  if (t.constraints_unmet) j["constraints_unmet"] = true;
  return j;
}

json attention_file_sentence(int64_t line, const std::string& source, const Translation& best,
                             const Tokenizer& tokenizer) {
  return {
      {"line", line},
      {"source", source},
      {"translation", best.text},
      {"score", json_float(best.score)},
      {"attention", best.attention ? attention_json(*best.attention, tokenizer) : json(nullptr)}};
}

bool is_request_search_option(std::string_view key) {
  return std::find(kRequestSearchOptions.begin(), kRequestSearchOptions.end(), key) !=
         kRequestSearchOptions.end();
}

json error_json(const ApiError& e) {
  json error = {{"status", e.status}, {"message", e.what()}};
  if (!e.limit.empty()) {
    error["limit"] = e.limit;
    error["max"] = e.max;
  }
  return {{"error", error}};
}

TranslateRequest parse_translate_request(const std::string& body, const Tokenizer& tokenizer,
                                         const ServiceLimits& limits,
                                         const TranslateOptions& defaults) {
  json doc;
  // A request nests two levels ({"text": [...]}); 100,000 nested brackets would cost tens of MB
  // to build before being refused, so parsing stops at the first level past kMaxJsonDepth.
  const json::parser_callback_t depth_limit = [](int depth, json::parse_event_t event, json&) {
    if (depth >= kMaxJsonDepth &&
        (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))
      throw bad(fmt::format("the body nests arrays and objects more than {} deep", kMaxJsonDepth));
    return true;
  };
  try {
    doc = json::parse(body, depth_limit);
  } catch (const json::exception& e) {
    // nlohmann's message names the byte: "parse error at line 1, column 9: ...". A number too
    // large for a double ("1e999") is an out_of_range, not a parse_error (found by
    // fuzz/api_request_fuzz.cc): "number overflow parsing '1e999'".
    std::string what = e.what();
    size_t at = what.find("parse error");
    if (at == std::string::npos && (at = what.find("] ")) != std::string::npos) at += 2;
    throw bad("malformed JSON: " + (at == std::string::npos ? what : what.substr(at)));
  }
  if (!doc.is_object()) throw bad("the body must be a JSON object, got " + type_of(doc));
  for (const auto& [key, value] : doc.items()) {
    if (key != "text" && key != "target_prefix" && key != "constraints" && key != "attention" &&
        key != "alignment" && !is_request_search_option(key))
      throw bad(
          fmt::format("unknown field \"{}\" (known: text, target_prefix, constraints, {}, "
                      "attention, alignment)",
                      key, fmt::join(kRequestSearchOptions, ", ")));
  }
  if (!doc.contains("text")) throw bad("missing field \"text\" (a string or an array of strings)");

  TranslateRequest r;
  const json& text = doc["text"];
  if (text.is_array() && static_cast<int64_t>(text.size()) > limits.max_sentences)
    throw ApiError(413,
                   fmt::format("\"text\" holds {} sentences; this server takes at most {} "
                               "a request",
                               text.size(), limits.max_sentences),
                   "max_sentences", limits.max_sentences);
  r.text = strings_of(text, "\"text\"");
  std::vector<std::string> prefixes(r.text.size());
  if (doc.contains("target_prefix")) {
    prefixes = strings_of(doc["target_prefix"], "\"target_prefix\"");
    if (prefixes.size() != r.text.size())
      throw bad(fmt::format("\"target_prefix\" holds {} prefixes for {} texts", prefixes.size(),
                            r.text.size()));
  }
  std::vector<std::vector<std::string>> constraints(r.text.size());
  if (doc.contains("constraints")) {
    const json& c = doc["constraints"];
    if (!c.is_array() || c.size() != r.text.size())
      throw bad(
          fmt::format("\"constraints\" must be an array of {} arrays of phrases, one for "
                      "each text",
                      r.text.size()));
    for (size_t i = 0; i < c.size(); ++i)
      constraints[i] = strings_of(c[i], fmt::format("\"constraints\"[{}]", i));
  }

  r.options = defaults;
  SearchOptions& s = r.options.search;
  if (!doc.contains("nbest")) s.nbest = std::min(s.nbest, s.beam);
  for (const SearchOptionSpec& spec : search_option_specs()) {
    if (!is_request_search_option(spec.key) || !doc.contains(spec.key)) continue;
    const json& v = doc[spec.key];
    // The service narrows ranges: the rows a sentence costs (the beam, the samples, the
    // alternatives) to its max_beam, and nbest to the request's beam unless sampling.
    OptionInfo narrowed = spec;
    std::string limit;
    if (spec.key == "beam" || spec.key == "nbest" || spec.key == "alternatives") {
      narrowed.max = limits.max_beam;
      limit = "max_beam";
    }
    if (spec.key == "max_input_len") {
      narrowed.max = static_cast<double>(limits.max_sentence_tokens);
      limit = "max_sentence_tokens";
    }
    if (v.is_number()) {
      if (const std::optional<std::string> problem = narrowed.range_problem(v.get<double>())) {
        throw ApiError(400, fmt::format("\"{}\" {}, got {}", spec.key, *problem, v.dump()), limit,
                       limit.empty() ? 0 : static_cast<int64_t>(*narrowed.max));
      }
    }
    try {
      spec.set(v, s);
    } catch (const Error& e) {
      throw bad(fmt::format("\"{}\" {}", spec.key, e.what()));
    }
  }
  try {
    check_search_options(s);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  if (doc.contains("attention")) {
    const json& a = doc["attention"];
    if (!a.is_boolean()) throw bad("\"attention\" must be true or false, got " + type_of(a));
    r.options.attention = a.get<bool>();
  }
  if (doc.contains("alignment")) {
    const json& a = doc["alignment"];
    if (!a.is_boolean()) throw bad("\"alignment\" must be true or false, got " + type_of(a));
    r.options.alignment = a.get<bool>();
  }

  // Splitting a sentence into pieces costs time and memory in its length (1 s and 250 MB for a
  // megabyte), so one too long to fit max_sentence_tokens pieces is refused, or cut, before that.
  const int64_t max_bytes = max_sentence_bytes(limits);
  const int64_t ceiling = limits.max_sentence_tokens;
  const bool truncate = s.long_input == LongInput::kTruncate;
  for (size_t i = 0; i < r.text.size(); ++i) {
    std::string_view text = r.text[i];
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      if (!truncate)
        throw ApiError(
            400,
            fmt::format("\"text\"[{}] is {} bytes long; this server takes at most {} "
                        "({} bytes for each of max_sentence_tokens {}; long_input truncate would "
                        "cut it)",
                        i, text.size(), max_bytes, kBytesPerToken, limits.max_sentence_tokens),
            "max_sentence_tokens", limits.max_sentence_tokens);
      // Cut at the start of a character (the text is valid UTF-8).
      size_t end = static_cast<size_t>(max_bytes);
      while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      text = text.substr(0, end);
    }
    std::vector<int32_t> ids = tokenizer.encode(text);
    try {
      hold_to_input_limit(ids, s, ceiling, fmt::format("\"text\"[{}]", i), nullptr,
                          "this server takes");
    } catch (const Error& e) {
      const bool own = input_limit_is_max_input_len(s, ceiling);
      throw ApiError(400, e.what(), own ? "max_input_len" : "max_sentence_tokens",
                     input_limit(s, ceiling));
    }
    r.sources.push_back(std::move(ids));
    // Measured in bytes before it is split, as the text is.
    const auto too_long = [&] {
      return ApiError(400,
                      fmt::format("\"target_prefix\"[{}] is longer than the {} subword tokens "
                                  "this server takes",
                                  i, limits.max_sentence_tokens),
                      "max_sentence_tokens", limits.max_sentence_tokens);
    };
    if (static_cast<int64_t>(prefixes[i].size()) > max_bytes) throw too_long();
    SentenceControls c{tokenizer.encode(prefixes[i]), i};
    if (static_cast<int64_t>(c.prefix.size()) > limits.max_sentence_tokens) throw too_long();
    int64_t constraint_bytes = 0;
    for (const std::string& phrase : constraints[i]) {
      constraint_bytes += static_cast<int64_t>(phrase.size());
      if (constraint_bytes > max_bytes)
        throw ApiError(400,
                       fmt::format("\"constraints\"[{}] are longer than the {} subword tokens "
                                   "this server takes",
                                   i, limits.max_sentence_tokens),
                       "max_sentence_tokens", limits.max_sentence_tokens);
      std::vector<int32_t> ids = tokenizer.encode(phrase);
      if (!ids.empty()) c.constraints.push_back(std::move(ids));
    }
    r.controls.push_back(std::move(c));
  }
  return r;
}

json translate_response(const TranslateRequest& request,
                        const std::vector<std::vector<Translation>>& results,
                        const Tokenizer& tokenizer, const std::string& model_name) {
  json translations = json::array();
  for (const std::vector<Translation>& found : results) {
    const bool alignment = request.options.alignment;
    json t = translation_json(found.front(), tokenizer, alignment);
    const SearchOptions& s = request.options.search;
    if (s.alternatives > 0 || s.nbest > 1) {
      json list = json::array();
      for (const Translation& h : found) list.push_back(translation_json(h, tokenizer, alignment));
      t[s.alternatives > 0 ? "alternatives" : "nbest"] = std::move(list);
    }
    if (request.options.attention)
      t["attention"] = found.front().attention ? attention_json(*found.front().attention, tokenizer)
                                               : json(nullptr);
    translations.push_back(std::move(t));
  }
  return {{"translations", std::move(translations)}, {"model", model_name}};
}

}  // namespace transduce
