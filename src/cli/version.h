// `transduce --version`: the release, and what this build was built from and with, for bug
// reports, for the recipes' reports (the commit) and for scripts that choose between one process
// and MPI ranks (recipes/common/mpi.py).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace transduce::cli {

// Four lines: "transduce 0.1.0"; "Commit: 0133de7" (or "0133de7 with uncommitted changes", or
// "unknown" when not built from a git checkout); "MPI: <library>" or "MPI: none (...)";
// "GEMMs: fp32 (...); bf16 (...); int8 (...)" as this CPU runs them.
std::string version_text();

// The commit this binary was built from, as --version's second line names it; `bench ... --json`
// reports it too ("commit"), so that a recorded figure names its build.
std::string build_commit();

// --version prints version_text() and exits 0, before any subcommand is required.
void add_version_flag(CLI::App& app);

}  // namespace transduce::cli
