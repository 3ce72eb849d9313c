#include "decode/search_options.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/shortest_float.h"

namespace transduce {

namespace {

using namespace option;

std::string_view ensemble_mean_name(EnsembleMean m) {
  return m == EnsembleMean::kProbabilities ? "prob" : "log-prob";
}

std::optional<EnsembleMean> ensemble_mean_from_name(std::string_view name) {
  if (name == "prob") return EnsembleMean::kProbabilities;
  if (name == "log-prob") return EnsembleMean::kLogProbabilities;
  return std::nullopt;
}

std::string_view long_input_name(LongInput l) {
  return l == LongInput::kRefuse ? "refuse" : "truncate";
}

std::optional<LongInput> long_input_from_name(std::string_view name) {
  if (name == "refuse") return LongInput::kRefuse;
  if (name == "truncate") return LongInput::kTruncate;
  return std::nullopt;
}

// "none", "topk:K" or "topp:P".
std::string sampling_name(const Sampling& s) {
  switch (s.kind) {
    case Sampling::Kind::kTopK:
      return fmt::format("topk:{}", s.k);
    case Sampling::Kind::kTopP:
      return fmt::format("topp:{}", shortest_float(s.p));
    default:
      return "none";
  }
}

std::optional<Sampling> sampling_from_name(const std::string& name) {
  Sampling s;
  if (name == "none") return s;
  const std::string_view kinds[] = {"topk:", "topp:"};
  for (int i = 0; i < 2; ++i) {
    if (name.rfind(kinds[i], 0) != 0) continue;
    const std::string number = name.substr(kinds[i].size());
    char* end = nullptr;
    errno = 0;
    if (i == 0) {
      const long k = std::strtol(number.c_str(), &end, 10);
      if (number.empty() || *end || errno || k < 1 || k > (1 << 30)) return std::nullopt;
      s.kind = Sampling::Kind::kTopK;
      s.k = static_cast<int>(k);
    } else {
      const float p = std::strtof(number.c_str(), &end);
      if (number.empty() || *end || errno || !(p > 0.0f && p <= 1.0f)) return std::nullopt;
      s.kind = Sampling::Kind::kTopP;
      s.p = p;
    }
    return s;
  }
  return std::nullopt;
}

SearchOptionSpec sampling_spec() {
  using O = SearchOptions;
  SearchOptionSpec s = base<O>("sampling",
                               "draw each token at random instead of searching: none, topk:K (from "
                               "the K most probable) or topp:P (from the fewest most probable "
                               "whose probabilities sum to P or more); nbest samples a sentence",
                               OptionInfo::Kind::kText);
  s.get = [](const O& o) { return nlohmann::json(sampling_name(o.sampling)); };
  s.set = [](const nlohmann::json& v, O& o) {
    const std::optional<Sampling> parsed =
        v.is_string() ? sampling_from_name(v.get<std::string>()) : std::nullopt;
    if (!parsed)
      fail("must be \"none\", \"topk:K\" (K at least 1) or \"topp:P\" (P in (0, 1]), got {}",
           shown(v));
    o.sampling = *parsed;
  };
  return s;
}

std::vector<SearchOptionSpec> make_specs() {
  using O = SearchOptions;
  return {
      number<O>("beam", "beam size (1: greedy)", &O::beam, at_least(1)),
      number<O>("alpha",
                "length penalty exponent: scores are log-probability / ((5 + length) / 6)^alpha",
                &O::alpha, within(0, 10)),
      number<O>("max_len_a", "output length limit: a * source tokens + b", &O::max_len_a,
                at_least(0)),
      number<O>("max_len_b", "output length limit: a * source tokens + b", &O::max_len_b,
                at_least(0)),
      number<O>("min_len_a",
                "output length minimum: a * source tokens + b, below the maximum (EOS is "
                "banned before it)",
                &O::min_len_a, at_least(0)),
      number<O>("min_len_b", "output length minimum: a * source tokens + b", &O::min_len_b,
                at_least(0)),
      number<O>("nbest",
                "hypotheses returned per sentence, best first (at most the beam; with sampling, "
                "the samples)",
                &O::nbest, at_least(1)),
      number<O>("no_repeat_ngram",
                "no n-gram of this many tokens appears twice in an output (0: off)",
                &O::no_repeat_ngram, at_least(0)),
      number<O>("repetition_penalty",
                "scores of tokens already in the output divided by this where positive, "
                "multiplied where negative (CTRL's penalty; 1: off)",
                &O::repetition_penalty, above(0)),
      sampling_spec(),
      number<O>("temperature", "sampling: probabilities raised to 1 / temperature", &O::temperature,
                above(0)),
      number<O>("seed", "sampling: the random seed (with the sentence's number, its draws)",
                &O::seed, at_least(0)),
      number<O>("alternatives",
                "the N most probable tokens after the prefix, each completed greedily: N outputs "
                "(0: off)",
                &O::alternatives, at_least(0)),
      choice<O>("ensemble_mean",
                "several models: average their probabilities (prob, fairseq's rule) or their "
                "log-probabilities (log-prob, OpenNMT-py's)",
                field(&O::ensemble), {"prob", "log-prob"}, ensemble_mean_name,
                ensemble_mean_from_name),
      number<O>("max_input_len",
                "the most subword pieces a source may have (0: as many as the model takes); a "
                "longer one is refused or cut, as long_input says",
                &O::max_input_len, at_least(0)),
      choice<O>("long_input",
                "a source longer than max_input_len: refuse (an error naming it) or truncate "
                "(cut to max_input_len pieces, with a warning)",
                field(&O::long_input), {"refuse", "truncate"}, long_input_name,
                long_input_from_name),
  };
}

}  // namespace

const std::vector<SearchOptionSpec>& search_option_specs() {
  static const std::vector<SearchOptionSpec> specs = make_specs();
  return specs;
}

int64_t outputs_per_sentence(const SearchOptions& o) {
  return o.alternatives > 0 ? o.alternatives : o.nbest;
}

void check_search_options(const SearchOptions& o) {
  if (o.nbest < 1) fail("nbest must be at least 1, got {}", o.nbest);
  if (o.alternatives == 0 && !o.sampling.on() && o.nbest > o.beam)
    fail("nbest ({}) must not exceed the beam ({}) unless sampling", o.nbest, o.beam);
}

void apply_search_options(const nlohmann::json& overrides, SearchOptions& options) {
  if (!overrides.is_object())
    fail("the search options must be an object of keys and values, not {}", overrides.type_name());
  for (const auto& [key, value] : overrides.items()) {
    const SearchOptionSpec* spec = find_option(search_option_specs(), key);
    if (!spec) fail("{} is not a search option", key);
    try {
      spec->set(value, options);
    } catch (const Error& e) {
      fail("{} {}", key, e.what());
    }
  }
}

nlohmann::json search_options_json(const SearchOptions& options,
                                   const std::vector<std::string>& keys) {
  nlohmann::json j = nlohmann::json::object();
  for (const SearchOptionSpec& s : search_option_specs())
    if (std::find(keys.begin(), keys.end(), s.key) != keys.end()) j[s.key] = s.get(options);
  return j;
}

}  // namespace transduce
