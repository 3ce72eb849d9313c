// A file's whole contents, for tests that compare what a command wrote.
#pragma once

#include <string>

namespace transduce::testing {

// The bytes of `path` as they are (no newline translation); empty when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace transduce::testing
