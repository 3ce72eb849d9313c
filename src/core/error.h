// The one exception type: a message meant for the user, naming what is wrong and where.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace transduce {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Internal invariant: a failure here is a bug in transduce, not in the user's input.
#define TD_CHECK(cond, ...)                                                       \
  do {                                                                            \
    if (!(cond))                                                                  \
      ::transduce::fail("internal check failed at {}:{}: {}", __FILE__, __LINE__, \
                        ::fmt::format(__VA_ARGS__));                              \
  } while (0)

}  // namespace transduce
