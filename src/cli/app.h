// The top level of the command line, shared by `transduce` (main.cc) and the Python module's
// train(): the options every subcommand takes, before or after its name.
#pragma once

#include <CLI/CLI.hpp>

namespace transduce::cli {

// --threads (BLAS and the kernels; default all cores), applied once the line is parsed, and
// fallthrough, so that subcommands hand it to the app.
void add_global_options(CLI::App& app);

}  // namespace transduce::cli
