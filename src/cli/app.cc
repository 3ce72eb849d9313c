#include "cli/app.h"

#include <memory>

#include "core/threads.h"

namespace transduce::cli {

void add_global_options(CLI::App& app) {
  app.fallthrough();
  auto threads = std::make_shared<int>(0);
  app.add_option("--threads", *threads,
                 "threads for BLAS and the kernels (default: all cores); before or after the "
                 "subcommand")
      ->check(CLI::Range(0, 4096));
  app.parse_complete_callback([threads] { set_threads(*threads); });
}

}  // namespace transduce::cli
