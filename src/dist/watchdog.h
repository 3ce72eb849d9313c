// A timer for operations that wait on other processes: when one stays armed longer than the
// time limit, the watchdog's thread calls `expired` (which in production prints and exits), so a
// job whose peer died or hangs ends instead of waiting forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace transduce {

class Watchdog {
 public:
  // `expired(what)` runs on the watchdog's thread, once per armed operation that overran.
  Watchdog(double timeout_seconds, std::function<void(const char* what)> expired);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(const char* what);
  void disarm();
  double timeout_seconds() const { return timeout_.count(); }

 private:
  void watch();

  std::chrono::duration<double> timeout_;
  std::function<void(const char*)> expired_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const char* what_ = nullptr;  // the armed operation; nullptr when none
  std::chrono::steady_clock::time_point deadline_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace transduce
