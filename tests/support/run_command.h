// Runs the built transduce binary as a script would, for command-line tests.
#pragma once

#include <string>

namespace transduce::testing {

struct CommandResult {
  int status;       // exit code, or -1 when the process did not exit normally
  std::string out;  // stdout, and stderr too when merged
  std::string err;  // stderr, from run_transduce_apart only
};

// `transduce` arguments for a training-step benchmark small enough to take a second, printing its
// JSON (the threads in use, the build's commit, ...).
inline constexpr const char* kSmallTrainBench =
    "bench train --preset tiny --layers 1 --d-model 32 --d-ff 64 --heads 2 --vocab-size 64 "
    "--steps 1 --batch-sentences 2 --src-len 4 --tgt-len 4 --json";

// Runs `command` with /bin/sh; stderr joins stdout when `merge_stderr`.
CommandResult run_shell(const std::string& command, bool merge_stderr = true);

// `args` go to the shell after the binary's path.
CommandResult run_transduce(const std::string& args, bool merge_stderr = true);
// The same with stdout in .out and stderr in .err, kept apart.
CommandResult run_transduce_apart(const std::string& args);

// A gtest failure unless `r` is how transduce refuses bad input: a non-zero exit and one line,
// "transduce: error: ...", that contains `says`.
void expect_one_line_error(const CommandResult& r, const std::string& says);

}  // namespace transduce::testing
