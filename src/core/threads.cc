#include "core/threads.h"

#include <omp.h>

#include <thread>

extern "C" void openblas_set_num_threads(int);

namespace transduce {

int num_cores() {
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

}  // namespace transduce
