// Joining the other processes of a job started by an MPI launcher (mpirun, srun, ...).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "dist/communicator.h"

namespace transduce {

// What the launcher told this process through its environment: its rank, the number of ranks,
// and how many of them share this machine. nullopt when no launcher started it.
struct LaunchInfo {
  int rank = 0;
  int size = 1;
  int local_size = 1;
};
std::optional<LaunchInfo> launch_info();

// Threads for one of `local_ranks` ranks on this machine: the cores of its affinity mask, shared
// out among the ranks when the launcher left every rank on every core.
int default_threads_per_rank(int local_ranks);

// A warning when the ranks of a machine were bound to fewer of its cores than they could use
// (Open MPI binds each rank to one core when it starts two or fewer), else an empty string.
std::string binding_warning(int bound_cores, int online_cores, int local_ranks);

// The job's communicator when this process is one of several ranks, or nullptr for a run of one
// process (no launcher, or a launcher with one rank). A collective that gets no answer from the
// other ranks for `timeout_seconds` ends this process with a message saying so, so a job whose
// rank died or hangs stops instead of waiting forever. Throws Error when several ranks were
// launched but this build has no MPI.
std::unique_ptr<Communicator> connect_ranks(double timeout_seconds);

// The MPI library this build runs ranks with, as it names itself ("Open MPI v4.1.4, package:
// ..."), or nullopt for a build without MPI. Needs no launcher and starts no MPI.
std::optional<std::string> mpi_library();

}  // namespace transduce
