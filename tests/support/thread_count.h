// Tests that change the thread count (core/threads.h: OpenMP and OpenBLAS) put it back when they
// end, however they end, so that the tests after them run as configured.
#pragma once

#include "core/threads.h"

namespace transduce::testing {

class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_threads(saved_); }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int saved_;
};

}  // namespace transduce::testing
