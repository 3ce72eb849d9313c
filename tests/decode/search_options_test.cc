// The search options' one declaration (decode/search_options.h): every option reads back what it
// writes, overrides apply by key with the declared ranges, and every command that searches offers
// the declared options under their flags with the declared help.
#include "decode/search_options.h"

#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "support/error_of.h"
#include "support/run_command.h"

namespace transduce {
namespace {

std::string error_of(const nlohmann::json& overrides) {
  SearchOptions o;
  return testing::error_of([&] { apply_search_options(overrides, o); });
}

TEST(SearchOptions, EachOptionReadsBackWhatItWrites) {
  const SearchOptions defaults;
  SearchOptions changed;
  changed.beam = 7;
  changed.alpha = 1.25f;
  changed.max_len_a = 1.5f;
  changed.max_len_b = 9;
  changed.min_len_a = 0.5f;
  changed.min_len_b = 2;
  changed.nbest = 3;
  changed.no_repeat_ngram = 3;
  changed.repetition_penalty = 1.2f;
  changed.sampling = {Sampling::Kind::kTopP, 0, 0.9f};
  changed.temperature = 0.7f;
  changed.seed = 12;
  changed.alternatives = 5;
  changed.ensemble = EnsembleMean::kLogProbabilities;
  changed.max_input_len = 100;
  changed.long_input = LongInput::kTruncate;
  ASSERT_EQ(search_option_specs().size(), 16u);
  for (const SearchOptionSpec& spec : search_option_specs()) {
    SearchOptions o = defaults;
    spec.set(spec.get(changed), o);
    EXPECT_EQ(spec.get(o), spec.get(changed)) << spec.key;
    EXPECT_NE(spec.get(defaults), spec.get(changed)) << spec.key;
  }
}

// "none", "topk:K" and "topp:P" read and write back; anything else is refused in one line.
TEST(SearchOptions, SamplingIsNoneTopKOrTopP) {
  SearchOptions o;
  EXPECT_EQ(search_options_json(o, {"sampling"}), nlohmann::json({{"sampling", "none"}}));
  apply_search_options({{"sampling", "topk:40"}}, o);
  EXPECT_EQ(o.sampling.kind, Sampling::Kind::kTopK);
  EXPECT_EQ(o.sampling.k, 40);
  EXPECT_EQ(search_options_json(o, {"sampling"}), nlohmann::json({{"sampling", "topk:40"}}));
  apply_search_options({{"sampling", "topp:0.9"}}, o);
  EXPECT_EQ(o.sampling.kind, Sampling::Kind::kTopP);
  EXPECT_FLOAT_EQ(o.sampling.p, 0.9f);
  EXPECT_EQ(search_options_json(o, {"sampling"}), nlohmann::json({{"sampling", "topp:0.9"}}));
  apply_search_options({{"sampling", "none"}}, o);
  EXPECT_FALSE(o.sampling.on());
  const std::string want =
      "sampling must be \"none\", \"topk:K\" (K at least 1) or \"topp:P\" (P in (0, 1]), got ";
  for (const char* bad : {"topk:0", "topk:", "topk:4x", "topp:0", "topp:1.5", "top:3", "random"})
    EXPECT_EQ(error_of({{"sampling", bad}}), fmt::format("{}\"{}\"", want, bad)) << bad;
  EXPECT_EQ(error_of({{"sampling", 3}}), want + "3");
}

TEST(SearchOptions, OverridesApplyByKeyWithinTheDeclaredRanges) {
  SearchOptions o;
  apply_search_options({{"beam", 8}, {"alpha", 1.5}, {"ensemble_mean", "log-prob"}}, o);
  EXPECT_EQ(o.beam, 8);
  EXPECT_FLOAT_EQ(o.alpha, 1.5f);
  EXPECT_EQ(o.ensemble, EnsembleMean::kLogProbabilities);
  EXPECT_EQ(o.max_len_b, SearchOptions{}.max_len_b);
  EXPECT_EQ(search_options_json(o, {"beam", "alpha"}),
            nlohmann::json({{"beam", 8}, {"alpha", 1.5}}));

  EXPECT_EQ(error_of({{"beam", 0}}), "beam must be at least 1, got 0");
  EXPECT_EQ(error_of({{"alpha", 11}}), "alpha must be between 0 and 10, got 11");
  EXPECT_EQ(error_of({{"beam", 2.5}}),
            "beam must be an integer within [-2147483648, 2147483647], got 2.5");
  EXPECT_EQ(error_of({{"beam", "4"}}), "beam must be an integer, not string");
  EXPECT_EQ(error_of({{"max_len_b", -1}}), "max_len_b must be at least 0, got -1");
  EXPECT_EQ(error_of({{"ensemble_mean", "mean"}}),
            "ensemble_mean must be \"prob\" or \"log-prob\", got \"mean\"");
  EXPECT_EQ(error_of({{"beams", 4}}), "beams is not a search option");
  EXPECT_EQ(error_of({{"temperature", 0}}), "temperature must be above 0, got 0");
  EXPECT_EQ(error_of({{"repetition_penalty", -1}}), "repetition_penalty must be above 0, got -1");
  EXPECT_EQ(error_of({{"max_input_len", -1}}), "max_input_len must be at least 0, got -1");
  EXPECT_EQ(error_of({{"long_input", "cut"}}),
            "long_input must be \"refuse\" or \"truncate\", got \"cut\"");
  EXPECT_EQ(error_of(nlohmann::json::array()),
            "the search options must be an object of keys and values, not array");
}

TEST(SearchOptions, EveryCommandThatSearchesOffersThemUnderTheirFlags) {
  const struct {
    const char* command;
    std::vector<std::string> keys;
  } commands[] = {
      {"translate",
       {"beam", "alpha", "max_len_a", "max_len_b", "nbest", "ensemble_mean", "max_input_len",
        "long_input"}},
      {"attention", {"beam", "alpha", "max_len_a", "max_len_b"}},
      {"parse", {"beam", "alpha", "max_len_a", "max_len_b"}},
      {"serve", {"beam", "alpha", "max_len_a", "max_len_b", "nbest", "long_input"}},
      {"score-pairs", {"alpha", "max_input_len", "long_input"}},
      {"bench translate", {"beam", "alpha", "max_len_b"}},
      {"bench serve", {"beam"}},
  };
  for (const auto& c : commands) {
    const testing::CommandResult r = testing::run_transduce(std::string(c.command) + " --help");
    ASSERT_EQ(r.status, 0) << c.command << ": " << r.out;
    for (const std::string& key : c.keys) {
      const SearchOptionSpec* spec = find_option(search_option_specs(), key);
      ASSERT_NE(spec, nullptr) << key;
      const size_t at = r.out.find(spec->flag() + " ");
      ASSERT_NE(at, std::string::npos) << c.command << " lacks " << spec->flag() << "\n" << r.out;
      EXPECT_NE(r.out.find(spec->help, at), std::string::npos)
          << c.command << " " << spec->flag() << ": not the declared help\n"
          << r.out;
    }
  }
}

}  // namespace
}  // namespace transduce
