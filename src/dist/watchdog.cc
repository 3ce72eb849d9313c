#include "dist/watchdog.h"

namespace transduce {

Watchdog::Watchdog(double timeout_seconds, std::function<void(const char*)> expired)
    : timeout_(timeout_seconds), expired_(std::move(expired)), thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

void Watchdog::arm(const char* what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    what_ = what;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
  }
  changed_.notify_one();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  what_ = nullptr;
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!what_) {
      changed_.wait(lock);
      continue;
    }
    const auto deadline = deadline_;
    changed_.wait_until(lock, deadline);
    if (what_ && !stopping_ && deadline_ == deadline &&
        std::chrono::steady_clock::now() >= deadline) {
      const char* what = what_;
      what_ = nullptr;
      lock.unlock();
      expired_(what);
      lock.lock();
    }
  }
}

}  // namespace transduce
