// transduce: the command-line entry point. Subcommands live in one file each.
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "core/error.h"
#include "ops/cpu/blas_kernels.h"

int main(int argc, char** argv) {
  // OpenBLAS chose kernels that leave this CPU's AVX-512 unused: start again with the right ones
  // (set before the library loads; with it set, the new process keeps what it finds).
  if (const std::optional<std::string> core = transduce::ops::better_openblas_coretype()) {
    setenv("OPENBLAS_CORETYPE", core->c_str(), 1);
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE");  // the exec failed: go on with OpenBLAS's own choice
  }
  CLI::App app{"transduce: Transformer translation toolkit (Vaswani et al., 2017)"};
  app.require_subcommand(1);
  // Global options after the subcommand too (`transduce train ... --threads 2`): subcommands
  // created below inherit fallthrough and hand options they do not know to their parent.
  transduce::cli::add_global_options(app);
  transduce::cli::add_version_flag(app);
  transduce::cli::register_params(app);
  transduce::cli::register_bench(app);
  transduce::cli::register_average(app);
  transduce::cli::register_quantize(app);
  transduce::cli::register_vocab(app);
  transduce::cli::register_train(app);
  transduce::cli::register_translate(app);
  transduce::cli::register_score(app);
  transduce::cli::register_score_pairs(app);
  transduce::cli::register_serve(app);
  transduce::cli::register_attention(app);
  transduce::cli::register_parse(app);
  transduce::cli::register_evalb(app);
  transduce::cli::register_trees(app);
  try {
    transduce::cli::refuse_renamed_flags(std::vector<std::string>(argv + 1, argv + argc));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const transduce::Error& e) {
    fmt::print(stderr, "transduce: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "transduce: unexpected error: {}\n", e.what());
    return 2;
  }
  return 0;
}
