// The corpus reader (src/text/corpus.h) as `transduce train` uses it: read_parallel on a source
// and a target file (the input, split at its first NUL byte), each through read_lines (UTF-8
// validation, CRLF, a byte order mark), then encode_parallel with a small vocabulary. Bad input
// must be a transduce::Error; what is read must keep read_lines' promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/utf8.h"
#include "fuzz_support.h"
#include "text/corpus.h"
#include "text/tokenizer.h"

using namespace transduce;

// Trained before the first input, so that a failure there is not blamed on one.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::small_tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile src, tgt;
  const Tokenizer& tok = fuzz::small_tokenizer();
  const std::vector<std::string_view> sides = fuzz::split(fuzz::as_text(data, size), '\0', 2);
  src.set(sides[0]);
  tgt.set(sides.size() > 1 ? sides[1] : std::string_view());
  ParallelText text;
  try {
    text = read_parallel(src.path(), tgt.path());
  } catch (const Error&) {
    return 0;
  }
  for (const auto* side : {&text.src, &text.tgt})
    for (const std::string& line : *side)
      if (line.find('\n') != std::string::npos || !valid_utf8(line))
        fuzz::violated("read_lines returned a line with '\\n' or invalid UTF-8");
  // A line limit from the input's size, so that some pairs are too long and some are not.
  const int max_len = static_cast<int>(size % 12);
  EncodeStats stats;
  std::vector<Example> examples;
  try {
    examples = encode_parallel(text, tok, max_len, &stats);
  } catch (const Error&) {
    return 0;
  }
  if (stats.pairs != static_cast<int64_t>(text.src.size()) ||
      stats.kept != static_cast<int64_t>(examples.size()) ||
      stats.kept + stats.skipped_empty + stats.skipped_long != stats.pairs)
    fuzz::violated("encode_parallel's counts do not add up");
  for (const Example& e : examples) {
    if (e.src.empty() || e.tgt.empty()) fuzz::violated("encode_parallel kept an empty side");
    if (max_len > 0 && (static_cast<int>(e.src.size()) + 1 > max_len ||
                        static_cast<int>(e.tgt.size()) + 1 > max_len))
      fuzz::violated("encode_parallel kept a side longer than max_len");
    for (const auto* ids : {&e.src, &e.tgt})
      for (int32_t id : *ids)
        if (id < 0 || id >= tok.vocab_size()) fuzz::violated("an id outside the vocabulary");
  }
  return 0;
}
