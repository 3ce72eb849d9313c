// The top level of the command line, shared by `transduce` (main.cc) and the Python module's
// train(): the options every subcommand takes, before or after its name, and the flags renamed.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace transduce::cli {

// --threads (BLAS and the kernels; default all cores), applied once the line is parsed, and
// fallthrough, so that subcommands hand it to the app.
void add_global_options(CLI::App& app);

// Fails with one line ("train: --out is now --output") when `args` (the words after the program's
// name) give a subcommand a flag under the name it had before the command line was made
// consistent.
void refuse_renamed_flags(const std::vector<std::string>& args);

// "transduce: warning: MESSAGE" on standard error: the warning callback commands give the library.
void print_warning(const std::string& message);

}  // namespace transduce::cli
