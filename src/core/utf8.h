// UTF-8 validation for corpus and vocabulary input (RFC 3629).
#pragma once

#include <cstddef>
#include <string_view>

namespace transduce {

// True if `s` is well-formed UTF-8: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF, no stray continuation bytes and no truncated sequences. On false, if
// `bad_offset` is not null, it receives the 0-based byte offset of the first byte of the first
// ill-formed sequence.
bool valid_utf8(std::string_view s, size_t* bad_offset = nullptr);

}  // namespace transduce
