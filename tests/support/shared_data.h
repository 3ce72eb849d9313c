// The project's shared data (../shared/data, or -DTRANSDUCE_DATA_DIR=...): the Penn Treebank
// sample and Multi30k. A test that needs it fails when it is missing; it never skips.
#pragma once

#include <string>

namespace transduce::testing {

// The path of `relative` under the data folder; throws std::runtime_error naming the folder and
// how to point at another one when the file is not there.
std::string shared_data_file(const std::string& relative);

}  // namespace transduce::testing
