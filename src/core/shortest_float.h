// A float as a double holding its shortest decimal text (0.1, not 0.10000000149011612), for JSON
// and configuration files written from float settings: read back as a float, it is the same one.
#pragma once

#include <string>

#include <fmt/format.h>

namespace transduce {

inline double shortest_float(float x) {
  return std::stod(fmt::format("{}", x));
}

}  // namespace transduce
