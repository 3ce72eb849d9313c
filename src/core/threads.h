// One thread setting for everything: OpenMP loops and OpenBLAS (its OpenMP build) share a pool.
#pragma once

namespace transduce {

// n <= 0 means all cores. Returns the number now in use.
int set_threads(int n);
int num_threads();
// Cores this process may use: those of its CPU affinity mask.
int num_cores();

}  // namespace transduce
