#include "support/file_text.h"

#include <fstream>
#include <sstream>

namespace transduce::testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace transduce::testing
