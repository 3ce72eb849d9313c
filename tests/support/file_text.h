// A file's whole contents, and text's lines, for tests that compare what a command wrote.
#pragma once

#include <string>
#include <vector>

namespace transduce::testing {

// The bytes of `path` as they are (no newline translation); empty when it cannot be read.
std::string read_file(const std::string& path);

// The lines of `text`, without their newlines ("a\nb\n" and "a\nb" are {"a", "b"}).
std::vector<std::string> lines_of(const std::string& text);

}  // namespace transduce::testing
