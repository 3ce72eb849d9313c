// The watchdog under the MPI collectives: it fires for an operation that overruns, names it, and
// stays quiet for operations disarmed in time.
#include "dist/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace transduce {
namespace {

using namespace std::chrono_literals;

struct Fired {
  std::atomic<int> count{0};
  std::string what;  // written before count is raised
};

TEST(Watchdog, FiresOnceForAnOperationThatOverruns) {
  Fired fired;
  Watchdog dog(0.05, [&](const char* what) {
    fired.what = what;
    fired.count.fetch_add(1);
  });
  dog.arm("the gradient sum");
  const auto start = std::chrono::steady_clock::now();
  while (fired.count.load() == 0 && std::chrono::steady_clock::now() - start < 10s)
    std::this_thread::sleep_for(1ms);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  ASSERT_EQ(fired.count.load(), 1);
  EXPECT_EQ(fired.what, "the gradient sum");
  std::this_thread::sleep_for(150ms);  // still armed in name only: it does not fire again
  EXPECT_EQ(fired.count.load(), 1);
}

TEST(Watchdog, StaysQuietForOperationsThatFinishInTime) {
  std::atomic<int> fired{0};
  Watchdog dog(0.3, [&](const char*) { fired.fetch_add(1); });
  // Each operation is shorter than the limit although together they last far longer: re-arming
  // restarts the clock.
  for (int i = 0; i < 10; ++i) {
    dog.arm("a short operation");
    std::this_thread::sleep_for(60ms);
    dog.disarm();
  }
  std::this_thread::sleep_for(400ms);  // disarmed: nothing to time
  EXPECT_EQ(fired.load(), 0);
  dog.arm("the last operation");
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(fired.load(), 1);
}

}  // namespace
}  // namespace transduce
