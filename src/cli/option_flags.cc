#include "cli/option_flags.h"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/option_names.h"

namespace transduce::cli {

namespace {

using Kind = OptionInfo::Kind;

// A command-line word as the JSON value the option reads: integers exactly (a seed may need all
// 64 bits), reals through strtod, text as it is.
nlohmann::json word_value(const OptionInfo& info, const std::string& word) {
  if (info.kind == Kind::kInteger) {
    const char* end = word.data() + word.size();
    if (!word.empty() && word[0] != '-') {
      uint64_t u = 0;
      const auto [p, ec] = std::from_chars(word.data(), end, u);
      if (ec == std::errc() && p == end) return u;
    }
    int64_t i = 0;
    const auto [p, ec] = std::from_chars(word.data(), end, i);
    if (ec == std::errc() && p == end) return i;
    fail("{}: an integer was expected, got {}", info.flag(), word);
  }
  if (info.kind == Kind::kReal) {
    int64_t i = 0;  // an integer as it was written ("1", not "1.0", in what is said of it)
    if (const auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), i);
        ec == std::errc() && p == word.data() + word.size())
      return i;
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size())
      fail("{}: a number was expected, got {}", info.flag(), word);
    return v;
  }
  return word;
}

// The help line: what the option does, and its range.
std::string help_text(const OptionInfo& info) {
  const std::string range = info.range_text();
  if (range.empty() || range == "a finite number") return info.help;
  return fmt::format("{}; {}", info.help, range);
}

// The default as the help shows it: "25000", "inverse-sqrt", "[ppl]".
std::string default_text(const nlohmann::json& v) {
  if (v.is_null()) return "";  // unset: the help shows none
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<std::string> names;
    for (const nlohmann::json& n : v) names.push_back(n.get<std::string>());
    return fmt::format("[{}]", fmt::join(names, ","));
  }
  return v.dump();
}

}  // namespace

nlohmann::json option_value(const OptionInfo& info, const std::vector<std::string>& words) {
  if (info.kind == Kind::kChoices) return words;
  if (words.size() != 1)
    fail("{}: one value was expected, got {}", info.flag(), fmt::join(words, " "));
  if (info.kind == Kind::kSwitch) {
    if (words[0] != "true" && words[0] != "false")
      fail("{}: true or false was expected, got {}", info.flag(), words[0]);
    return words[0] == "true";
  }
  return word_value(info, words[0]);
}

CLI::Option* add_option_flag(CLI::App& cmd, const OptionInfo& info,
                             std::function<void(const nlohmann::json&)> set,
                             const nlohmann::json& default_value) {
  // What is wrong with a value fails in one line naming the flag.
  auto checked = [set = std::move(set), flag = info.flag()](const nlohmann::json& v) {
    try {
      set(v);
    } catch (const Error& e) {
      fail("{} {}", flag, e.what());
    }
  };
  const std::string names =
      info.short_flag.empty() ? info.flag() : info.short_flag + "," + info.flag();
  CLI::Option* opt = nullptr;
  if (info.kind == Kind::kSwitch) {
    return cmd.add_flag_function(
        names, [checked](int64_t count) { checked(nlohmann::json(count > 0)); }, info.help);
  }
  if (info.kind == Kind::kChoices) {
    opt = cmd.add_option_function<std::vector<std::string>>(
        names, [checked](const std::vector<std::string>& words) { checked(nlohmann::json(words)); },
        help_text(info));
  } else {
    opt = cmd.add_option_function<std::string>(
        names, [checked, &info](const std::string& word) { checked(word_value(info, word)); },
        help_text(info));
  }
  opt->default_str(default_text(default_value));
  if (!info.choices.empty()) {
    opt->type_name(fmt::format("{{{}}}", fmt::join(info.choices, ",")));
  } else if (info.kind == Kind::kInteger) {
    opt->type_name("INT");
  } else if (info.kind == Kind::kReal) {
    opt->type_name("FLOAT");
  }
  return opt;
}

void naming_flags(const std::vector<std::string>& keys, const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    fail("{}", name_options(e.what(), keys, flag_of_key));
  }
}

}  // namespace transduce::cli
