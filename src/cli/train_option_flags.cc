#include "cli/train_option_flags.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace transduce::cli {

namespace {

using Kind = TrainOptionSpec::Kind;

// A command-line word as the JSON value the option reads: integers exactly (a seed may need all
// 64 bits), reals through strtod, text as it is.
nlohmann::json word_value(const TrainOptionSpec& spec, const std::string& word) {
  if (spec.kind == Kind::kInteger) {
    const char* end = word.data() + word.size();
    if (!word.empty() && word[0] != '-') {
      uint64_t u = 0;
      const auto [p, ec] = std::from_chars(word.data(), end, u);
      if (ec == std::errc() && p == end) return u;
    }
    int64_t i = 0;
    const auto [p, ec] = std::from_chars(word.data(), end, i);
    if (ec == std::errc() && p == end) return i;
    fail("{}: an integer was expected, got {}", spec.flag(), word);
  }
  if (spec.kind == Kind::kReal) {
    int64_t i = 0;  // an integer as it was written ("1", not "1.0", in what is said of it)
    if (const auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), i);
        ec == std::errc() && p == word.data() + word.size())
      return i;
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size())
      fail("{}: a number was expected, got {}", spec.flag(), word);
    return v;
  }
  return word;
}

// The value written into `into`; what is wrong with it fails in one line naming the flag (not
// CLI11's two-line error).
void set(const TrainOptionSpec& spec, const nlohmann::json& v, TrainOptions& into) {
  try {
    spec.set(v, into);
  } catch (const Error& e) {
    fail("{} {}", spec.flag(), e.what());
  }
}

// The help line: what the option does, and its range.
std::string help_text(const TrainOptionSpec& spec) {
  const std::string range = spec.range_text();
  if (range.empty() || range == "a finite number") return spec.help;
  return fmt::format("{}; {}", spec.help, range);
}

// The default as the help shows it: "25000", "inverse-sqrt", "[ppl]".
std::string default_text(const TrainOptionSpec& spec) {
  const nlohmann::json v = spec.get(TrainOptions{});
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<std::string> names;
    for (const nlohmann::json& n : v) names.push_back(n.get<std::string>());
    return fmt::format("[{}]", fmt::join(names, ","));
  }
  return v.dump();
}

}  // namespace

void add_train_option_flags(CLI::App& cmd, TrainOptions& into) {
  for (const TrainOptionSpec& spec : train_option_specs()) {
    CLI::Option* opt = nullptr;
    if (spec.kind == Kind::kChoices) {
      opt = cmd.add_option_function<std::vector<std::string>>(
          spec.flag(),
          [&spec, &into](const std::vector<std::string>& words) {
            set(spec, nlohmann::json(words), into);
          },
          help_text(spec));
    } else {
      opt = cmd.add_option_function<std::string>(
          spec.flag(),
          [&spec, &into](const std::string& word) { set(spec, word_value(spec, word), into); },
          help_text(spec));
    }
    opt->default_str(default_text(spec));
    if (!spec.choices.empty()) {
      opt->type_name(fmt::format("{{{}}}", fmt::join(spec.choices, ",")));
    } else if (spec.kind == Kind::kInteger) {
      opt->type_name("INT");
    } else if (spec.kind == Kind::kReal) {
      opt->type_name("FLOAT");
    }
  }
}

}  // namespace transduce::cli
