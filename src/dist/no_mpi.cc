// connect_ranks for a build without MPI (TRANSDUCE_MPI=OFF): one process only.
#include "core/error.h"
#include "dist/launch.h"

namespace transduce {

std::unique_ptr<Communicator> connect_ranks(double) {
  const std::optional<LaunchInfo> info = launch_info();
  if (info && info->size > 1)
    fail(
        "started as rank {} of {} by an MPI launcher, but this transduce was built without MPI: "
        "install libopenmpi-dev and rebuild with -DTRANSDUCE_MPI=ON",
        info->rank, info->size);
  return nullptr;
}

std::optional<std::string> mpi_library() {
  return std::nullopt;
}

}  // namespace transduce
