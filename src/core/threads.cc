#include "core/threads.h"

#include <omp.h>
#include <sched.h>

#include <thread>

extern "C" void openblas_set_num_threads(int);

namespace transduce {

int num_cores() {
  // The cores this process may run on (taskset, cgroups, an MPI launcher's binding), else all.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int set_threads(int n) {
  if (n <= 0) n = num_cores();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  return n;
}

int num_threads() {
  return omp_get_max_threads();
}

ScopedOmpThreads::ScopedOmpThreads(int n) : before_(omp_get_max_threads()) {
  if (n != before_) omp_set_num_threads(n);
}

ScopedOmpThreads::~ScopedOmpThreads() {
  if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
}

}  // namespace transduce
