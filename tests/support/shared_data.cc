#include "support/shared_data.h"

#include <filesystem>
#include <stdexcept>

namespace transduce::testing {

std::string shared_data_file(const std::string& relative) {
  const std::filesystem::path path = std::filesystem::path(TRANSDUCE_DATA_DIR) / relative;
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(path.string() +
                             " is missing: the tests need the project's shared data (configure "
                             "with -DTRANSDUCE_DATA_DIR=DIR to use another folder)");
  return path.string();
}

}  // namespace transduce::testing
