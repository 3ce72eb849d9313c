// ScopedOmpThreads: OpenMP regions on the calling thread use the scope's count, and the count
// before comes back when the scope ends, by an exception too.
#include <gtest/gtest.h>

#include <omp.h>

#include <stdexcept>

#include "core/threads.h"
#include "support/thread_count.h"

namespace transduce {
namespace {

int team_size() {
  int size = 0;
#pragma omp parallel
  {
#pragma omp single
    size = omp_get_num_threads();
  }
  return size;
}

TEST(ScopedOmpThreads, SetsThisThreadsCountAndPutsItBack) {
  testing::ThreadCountGuard guard;
  set_threads(3);
  ASSERT_EQ(team_size(), 3);
  {
    const ScopedOmpThreads one(1);
    EXPECT_EQ(team_size(), 1);
  }
  EXPECT_EQ(team_size(), 3);
  try {
    const ScopedOmpThreads two(2);
    EXPECT_EQ(team_size(), 2);
    throw std::runtime_error("leaving early");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(team_size(), 3);
}

}  // namespace
}  // namespace transduce
