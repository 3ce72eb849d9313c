// A JSON value read as a C++ number without surprises: nlohmann's get<int>() wraps an integer out
// of range, converts a float out of range (undefined behaviour) and throws its own type_error for
// a string. Readers of files from outside (config.json, parse.json, state.json) use this and say
// what is wrong in their own words. (Each case was found through the fuzz targets of fuzz/: by
// the fuzzer, or by inputs written for them.)
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace transduce {

// `v` as T: any number for a floating-point T; for an integer T, a number of integral value within
// T's range. std::nullopt otherwise (a string, a fraction, 1e30 for an int...).
template <typename T>
std::optional<T> json_number(const nlohmann::json& v) {
  if (!v.is_number()) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.get<double>());
  } else {
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const uint64_t x = v.get<uint64_t>();
      if (x <= static_cast<uint64_t>(Limits::max())) return static_cast<T>(x);
    } else if (v.is_number_integer()) {
      const int64_t x = v.get<int64_t>();
      if (x >= static_cast<int64_t>(Limits::min()) &&
          (x < 0 || static_cast<uint64_t>(x) <= static_cast<uint64_t>(Limits::max())))
        return static_cast<T>(x);
    } else {
      const double x = v.get<double>();
      if (std::floor(x) == x && x >= static_cast<double>(Limits::min()) &&
          x < static_cast<double>(Limits::max()) + 1.0)
        return static_cast<T>(x);
    }
    return std::nullopt;
  }
}

}  // namespace transduce
