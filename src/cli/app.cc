#include "cli/app.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/threads.h"

namespace transduce::cli {

namespace {

struct RenamedFlag {
  std::string_view command;  // "train", or "bench train" for a subcommand's subcommand
  std::string_view before, now;
};

// Each flag that once meant something else by its name, or named the same idea differently from
// the other subcommands (docs: one name for one idea across the command line).
constexpr RenamedFlag kRenamed[] = {
    {"train", "--out", "--output"},
    {"train", "--precision", "--compute-type"},
    {"vocab", "--out", "--output"},
    {"vocab", "--size", "--vocab-size"},
    {"vocab", "--type", "--vocab-type"},
    {"vocab", "--max-sentences", "--max-lines"},
    {"average", "--out", "--output"},
    {"quantize", "--out", "--output"},
    {"quantize", "--type", "--compute-type"},
    {"evalb", "--pred", "--hyp"},
    {"attention", "--src", "--sentence"},
    {"attention", "--html", "--output"},
    {"attention", "--json", "--attention"},
    {"params", "--vocab", "--vocab-size"},
    {"bench train", "--vocab", "--vocab-size"},
    {"bench train", "--batch", "--batch-sentences"},
    {"bench train", "--precision", "--compute-type"},
    {"bench translate", "--vocab", "--vocab-size"},
    {"bench translate", "--batch", "--batch-sentences"},
};

// Whether the words name `command` ("bench train": "bench" followed by "train").
bool names_command(const std::vector<std::string>& args, std::string_view command) {
  const size_t space = command.find(' ');
  const std::string_view first = command.substr(0, space);
  const auto it = std::find(args.begin(), args.end(), first);
  if (it == args.end()) return false;
  if (space == std::string_view::npos) return true;
  return std::find(it + 1, args.end(), command.substr(space + 1)) != args.end();
}

}  // namespace

void add_global_options(CLI::App& app) {
  app.fallthrough();
  auto threads = std::make_shared<int>(0);
  app.add_option("--threads", *threads,
                 "threads for BLAS and the kernels (default: all cores); before or after the "
                 "subcommand")
      ->check(CLI::Range(0, 4096));
  app.parse_complete_callback([threads] { set_threads(*threads); });
}

void refuse_renamed_flags(const std::vector<std::string>& args) {
  for (const RenamedFlag& r : kRenamed) {
    for (const std::string& word : args) {
      const std::string_view w = word;
      if (w != r.before && !(w.starts_with(r.before) && w.substr(r.before.size()).starts_with('=')))
        continue;
      if (names_command(args, r.command)) fail("{}: {} is now {}", r.command, r.before, r.now);
    }
  }
}

void print_warning(const std::string& message) {
  fmt::print(stderr, "transduce: warning: {}\n", message);
}

}  // namespace transduce::cli
