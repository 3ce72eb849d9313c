#include "decode/search_options.h"

#include <algorithm>
#include <optional>

#include "core/error.h"

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
      number<O>("nbest", "hypotheses returned per sentence, best first (at most the beam)",
                &O::nbest, at_least(1)),
      choice<O>("ensemble_mean",
                "several models: average their probabilities (prob, fairseq's rule) or their "
                "log-probabilities (log-prob, OpenNMT-py's)",
                field(&O::ensemble), {"prob", "log-prob"}, ensemble_mean_name,
                ensemble_mean_from_name),
  };
}

}  // namespace

const std::vector<SearchOptionSpec>& search_option_specs() {
  static const std::vector<SearchOptionSpec> specs = make_specs();
  return specs;
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
