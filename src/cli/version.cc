#include "cli/version.h"

#include <fmt/format.h>

#include "dist/launch.h"
#include "model/precision.h"

#ifndef TRANSDUCE_VERSION
#error "TRANSDUCE_VERSION comes from CMake's project(VERSION)"
#endif

namespace transduce::cli {

std::string version_text() {
  const std::optional<std::string> mpi = mpi_library();
  return fmt::format("transduce {}\nMPI: {}\nGEMMs: {}; {}; {}", TRANSDUCE_VERSION,
                     mpi ? *mpi : "none (built without MPI: one process only)",
                     gemm_description(Precision::FP32), gemm_description(Precision::BF16),
                     gemm_description(Precision::INT8));
}

void add_version_flag(CLI::App& app) {
  app.set_version_flag(
      "--version", [] { return version_text(); },
      "print the release, the MPI library and the GEMM libraries, and exit");
}

}  // namespace transduce::cli
