// One thread setting for everything: OpenMP loops and OpenBLAS (its OpenMP build) share a pool.
#pragma once

namespace transduce {

// n <= 0 means all cores. Returns the number now in use.
int set_threads(int n);
int num_threads();
// Cores this process may use: those of its CPU affinity mask.
int num_cores();

// While it lives, OpenMP regions started on the calling thread (OpenMP's thread count is a
// per-thread setting) use `n` threads; the count before is put back however the scope ends.
// OpenBLAS is not touched.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int n);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int before_;
};

}  // namespace transduce
