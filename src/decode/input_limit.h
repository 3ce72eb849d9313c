// The one rule for sources longer than SearchOptions::max_input_len, shared by everything that
// turns text into sources (translate, Python, score-pairs, the service): within the limit a
// source is left as it is; over it, it is refused with one line naming it, or cut to the limit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "decode/search.h"

namespace transduce {

// The options this rule reads (search option keys).
inline const std::vector<std::string> kInputLimitKeys = {"max_input_len", "long_input"};

// The most pieces a source may have: options.max_input_len when above 0 and below `ceiling`
// (what the model takes, or a server's limit), else the ceiling.
int64_t input_limit(const SearchOptions& options, int64_t ceiling);

// Holds `pieces` to input_limit(options, ceiling): within it they stay as they are. Over it,
// long_input truncate cuts them to the limit and says so through `warn` ("WHERE: N subword
// pieces, cut to the first L"); refuse fails with "WHERE: N subword pieces, more than
// max_input_len L ..." when max_input_len set the limit, "WHERE: N subword pieces; CEILING_NAME
// at most L ..." when the ceiling did (ceiling_name: "the model takes", "this server takes").
void hold_to_input_limit(std::vector<int32_t>& pieces, const SearchOptions& options,
                         int64_t ceiling, std::string_view where,
                         const std::function<void(const std::string&)>& warn = nullptr,
                         std::string_view ceiling_name = "the model takes");

// Whether the limit that applies is max_input_len's rather than the ceiling's.
bool input_limit_is_max_input_len(const SearchOptions& options, int64_t ceiling);

}  // namespace transduce
