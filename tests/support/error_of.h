// The message of the transduce::Error a piece of code throws, for tests of what a user is told.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace transduce::testing {

// The message of the transduce::Error `f` throws; a test failure and "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no transduce::Error thrown";
  return "";
}

}  // namespace transduce::testing
