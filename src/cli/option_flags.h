// Flags made from options' one declaration (core/option_spec.h): --batch-tokens for batch_tokens,
// with its help, default and range. A value of the wrong kind or out of range fails in one line
// naming the flag (not CLI11's two-line error).
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/option_spec.h"

namespace transduce::cli {

// The flag of `info`: `set` receives its value as JSON when given; help shows `default_value`.
CLI::Option* add_option_flag(CLI::App& cmd, const OptionInfo& info,
                             std::function<void(const nlohmann::json&)> set,
                             const nlohmann::json& default_value);

// Command-line words (or a configuration file's, cli/config_file.h) as the JSON value the option
// of `info` reads: one number, one text, a list for kChoices, true or false for a switch.
nlohmann::json option_value(const OptionInfo& info, const std::vector<std::string>& words);

// A flag for each of `specs` (those of `keys` only, when given), writing into `into`; the help's
// defaults are those of `defaults`.
template <typename Options>
void add_option_flags(CLI::App& cmd, const std::vector<OptionSpec<Options>>& specs, Options& into,
                      const std::vector<std::string>& keys = {},
                      const Options& defaults = Options{}) {
  for (const OptionSpec<Options>& spec : specs) {
    if (!keys.empty() && std::find(keys.begin(), keys.end(), spec.key) == keys.end()) continue;
    add_option_flag(
        cmd, spec, [&spec, &into](const nlohmann::json& v) { spec.set(v, into); },
        spec.get(defaults));
  }
}

// Runs `body`; an error that names any of `keys` (library words such as "max_input_len") is
// rethrown naming their flags ("--max-input-len").
void naming_flags(const std::vector<std::string>& keys, const std::function<void()>& body);

// The keys of `specs` whose flags were given (on the command line or in a configuration file).
template <typename Options>
std::set<std::string> given_options(const CLI::App& cmd,
                                    const std::vector<OptionSpec<Options>>& specs) {
  std::set<std::string> given;
  for (const OptionSpec<Options>& spec : specs)
    if (const CLI::Option* opt = cmd.get_option_no_throw(spec.flag()); opt && opt->count() > 0)
      given.insert(spec.key);
  return given;
}

}  // namespace transduce::cli
