// `transduce bench`: placeholder registration, filled in by the benchmark work.
#include "cli/commands.h"

namespace transduce::cli {

void register_bench(CLI::App&) {}

}  // namespace transduce::cli
