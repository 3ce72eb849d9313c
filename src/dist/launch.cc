#include "dist/launch.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "core/threads.h"

namespace transduce {

namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace

std::optional<LaunchInfo> launch_info() {
  // Open MPI's mpirun, then the PMI variables of MPICH's and Intel MPI's launchers.
  struct Names {
    const char *rank, *size, *local_size;
  };
  for (const Names& n :
       {Names{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"},
        Names{"PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}}) {
    const std::optional<int> rank = env_int(n.rank), size = env_int(n.size);
    if (!rank || !size || *size < 1 || *rank >= *size) continue;
    return LaunchInfo{*rank, *size, std::max(1, env_int(n.local_size).value_or(1))};
  }
  return std::nullopt;
}

int default_threads_per_rank(int local_ranks) {
  const int cores = num_cores();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (local_ranks > 1 && cores == online) return std::max(1, cores / local_ranks);
  return cores;
}

std::string binding_warning(int bound_cores, int online_cores, int local_ranks) {
  if (bound_cores * local_ranks >= online_cores) return "";
  return fmt::format(
      "each rank may run on {} of this machine's {} cores ({} ranks here): the launcher bound "
      "it; give mpirun --bind-to none, or --map-by slot:PE={} for that many cores per rank",
      bound_cores, online_cores, local_ranks, std::max(1, online_cores / local_ranks));
}

void SingleProcess::abort(int code) {
  std::exit(code);
}

}  // namespace transduce
