// `transduce --version`: the release, and what this build was built with, for bug reports and
// for scripts that choose between one process and MPI ranks (recipes/common/mpi.py).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace transduce::cli {

// Three lines: "transduce 0.1.0"; "MPI: <library>" or "MPI: none (...)"; "GEMMs: fp32 (...);
// bf16 (...); int8 (...)" as this CPU runs them.
std::string version_text();

// --version prints version_text() and exits 0, before any subcommand is required.
void add_version_flag(CLI::App& app);

}  // namespace transduce::cli
