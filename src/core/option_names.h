// How an option is spelled where: a flag on the command line (--batch-tokens) and a key in
// configuration files, saved JSON and Python keyword arguments (batch_tokens). One rule, written
// here: the key is the long flag without its dashes, '_' for '-'.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace transduce {

// "batch_tokens" -> "--batch-tokens".
inline std::string flag_of_key(std::string_view key) {
  std::string flag = "--" + std::string(key);
  std::replace(flag.begin() + 2, flag.end(), '_', '-');
  return flag;
}

// "--batch-tokens" (or "-o") -> "batch_tokens" ("o").
inline std::string key_of_flag(std::string_view flag) {
  const size_t start = flag.find_first_not_of('-');
  std::string key(start == std::string_view::npos ? std::string_view() : flag.substr(start));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

}  // namespace transduce
