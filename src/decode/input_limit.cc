#include "decode/input_limit.h"

#include <fmt/format.h>

#include "core/error.h"

namespace transduce {

bool input_limit_is_max_input_len(const SearchOptions& options, int64_t ceiling) {
  return options.max_input_len > 0 && options.max_input_len < ceiling;
}

int64_t input_limit(const SearchOptions& options, int64_t ceiling) {
  return input_limit_is_max_input_len(options, ceiling) ? options.max_input_len : ceiling;
}

void hold_to_input_limit(std::vector<int32_t>& pieces, const SearchOptions& options,
                         int64_t ceiling, std::string_view where,
                         const std::function<void(const std::string&)>& warn,
                         std::string_view ceiling_name) {
  const int64_t limit = input_limit(options, ceiling);
  const int64_t n = static_cast<int64_t>(pieces.size());
  if (n <= limit) return;
  if (options.long_input == LongInput::kTruncate) {
    pieces.resize(static_cast<size_t>(limit));
    if (warn) warn(fmt::format("{}: {} subword pieces, cut to the first {}", where, n, limit));
    return;
  }
  if (input_limit_is_max_input_len(options, ceiling))
    fail("{}: {} subword pieces, more than max_input_len {} (long_input truncate would cut it)",
         where, n, limit);
  fail("{}: {} subword pieces; {} at most {} (long_input truncate would cut it)", where, n,
       ceiling_name, limit);
}

}  // namespace transduce
