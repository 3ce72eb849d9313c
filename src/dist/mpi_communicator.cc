// The Communicator over MPI (built with TRANSDUCE_MPI). Every collective runs under a watchdog:
// MPI itself waits forever for a peer that hangs, so a rank that gets no answer within the time
// limit prints why and exits, and the launcher then ends the job.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"
#include "dist/launch.h"
#include "dist/watchdog.h"

namespace transduce {

namespace {

// MPI counts are ints: longer buffers go in pieces.
constexpr int64_t kMaxCount = INT_MAX / 2;

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(double timeout_seconds)
      : watchdog_(timeout_seconds, [this](const char* what) { timed_out(what); }) {
    int provided = 0;
    // Only the main thread calls MPI; OpenMP's threads and the watchdog's never do.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override {
    watchdog_.arm("the end of the job (MPI_Finalize)");
    MPI_Finalize();
    watchdog_.disarm();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void sum(float* data, int64_t n, const char* what) override {
    all_reduce(data, n, MPI_FLOAT, what);
  }
  void sum(double* data, int64_t n, const char* what) override {
    all_reduce(data, n, MPI_DOUBLE, what);
  }

  void broadcast(void* data, int64_t bytes, const char* what) override {
    watchdog_.arm(what);
    char* p = static_cast<char*>(data);
    for (int64_t done = 0; done < bytes; done += kMaxCount) {
      const int count = static_cast<int>(std::min(kMaxCount, bytes - done));
      MPI_Bcast(p + done, count, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    watchdog_.disarm();
  }

  bool agree(uint64_t value, const char* what) override {
    // The largest value and the largest complement: both match this rank's only if all agree.
    uint64_t v[2] = {value, ~value};
    watchdog_.arm(what);
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    watchdog_.disarm();
    return v[0] == value && v[1] == ~value;
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  void all_reduce(void* data, int64_t n, MPI_Datatype type, const char* what) {
    int type_size = 0;
    MPI_Type_size(type, &type_size);
    char* p = static_cast<char*>(data);
    watchdog_.arm(what);
    for (int64_t done = 0; done < n; done += kMaxCount) {
      const int count = static_cast<int>(std::min(kMaxCount, n - done));
      MPI_Allreduce(MPI_IN_PLACE, p + done * type_size, count, type, MPI_SUM, MPI_COMM_WORLD);
    }
    watchdog_.disarm();
  }

  // On the watchdog's thread while the main thread is stuck inside MPI: no MPI call is allowed
  // here, so it says why and exits; the launcher sees the failed rank and ends the others.
  void timed_out(const char* what) {
    fmt::print(stderr,
               "transduce: error: rank {} of {}: no answer from the other ranks for {:g} s in {}: "
               "a rank has died or hangs (--dist-timeout); stopping. Checkpoints already written "
               "are complete.\n",
               rank_, size_, watchdog_.timeout_seconds(), what);
    std::fflush(stderr);
    std::_Exit(1);
  }

  Watchdog watchdog_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> connect_ranks(double timeout_seconds) {
  const std::optional<LaunchInfo> info = launch_info();
  if (!info || info->size <= 1) return nullptr;
  if (timeout_seconds <= 0) fail("--dist-timeout must be positive, got {}", timeout_seconds);
  auto comm = std::make_unique<MpiCommunicator>(timeout_seconds);
  if (comm->size() != info->size)
    fail("the launcher announced {} ranks but MPI has {}", info->size, comm->size());
  return comm;
}

std::optional<std::string> mpi_library() {
  // One of the few MPI calls allowed before MPI_Init; its text may run over several lines.
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string name(text, static_cast<size_t>(std::max(length, 0)));
  name = name.substr(0, name.find('\n'));
  while (!name.empty() && (name.back() == '\0' || name.back() == ' ')) name.pop_back();
  return name;
}

}  // namespace transduce
