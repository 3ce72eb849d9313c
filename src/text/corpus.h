// Reading and validating text corpora, and turning parallel text into training examples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/example.h"

namespace transduce {

class Tokenizer;

// The lines of a whole file, without their '\n' (nor the '\r' of a CRLF line end). A final line
// without '\n' counts; an empty file has no lines; a UTF-8 byte order mark at the start of the
// file is dropped. Errors: a file that cannot be read ("path: cannot open: reason"), and invalid
// UTF-8 ("path:LINE: invalid UTF-8 at byte COL", LINE and COL 1-based, COL counting bytes in the
// line).
std::vector<std::string> read_lines(const std::string& path);

struct ParallelText {
  std::vector<std::string> src, tgt;
  std::string src_path, tgt_path;
};

// Both sides, line i of one translating line i of the other; different line counts are an
// error naming both files and both counts.
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path);

struct EncodeStats {
  int64_t pairs = 0;          // pairs read
  int64_t kept = 0;           // pairs returned
  int64_t skipped_empty = 0;  // a side empty after trimming whitespace (or with no tokens)
  int64_t skipped_long = 0;   // a side longer than max_len (and not empty)
};

// Encodes every pair with `tok`, in file order, skipping (and counting in `stats`, if not null)
// pairs with an empty side and pairs with a side that is too long. `max_len` counts the tokens
// the model sees for a side: its subword tokens plus one for EOS, so a side of n subword tokens
// is kept only if n + 1 <= max_len. max_len <= 0 means no limit. Encodes in parallel (OpenMP).
// `kept_lines`, when given, receives the 0-based line of each pair returned.
// Whether a side of `tokens` subword tokens fits `max_len` with its EOS (max_len <= 0: no limit).
inline bool fits_max_len(size_t tokens, int max_len) {
  return max_len <= 0 || static_cast<int64_t>(tokens) + 1 <= max_len;
}

std::vector<Example> encode_parallel(const ParallelText& text, const Tokenizer& tok, int max_len,
                                     EncodeStats* stats,
                                     std::vector<int64_t>* kept_lines = nullptr);

}  // namespace transduce
