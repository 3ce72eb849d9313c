// The public API's calls into the library: its transduce::Error becomes the API's Error.
#pragma once

#include <utility>

#include "core/error.h"
#include "transduce/transduce.h"

namespace transduce::api {

template <typename F>
auto translating_errors(F&& f) -> decltype(f()) {
  try {
    return std::forward<F>(f)();
  } catch (const ::transduce::Error& e) {
    throw Error(e.what());
  }
}

}  // namespace transduce::api
