// The vocabulary file, MODEL_DIR/spm.model: what Tokenizer's constructor (src/text/tokenizer.h)
// does with its bytes (read, SentencePiece's parse, the reserved-id check), then what every
// command does with a loaded vocabulary: encode text, decode the ids, look pieces up. A corrupt
// file must be a transduce::Error naming it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_support.h"
#include "text/tokenizer.h"

using namespace transduce;

namespace {

constexpr const char* kText[] = {
    "A man in an orange hat starring at something.",
    "Ein Boston Terrier läuft über saftig-grünes Gras.  ﬁ ＦＵＬＬ ① ½ İ ΟΔΟΣ 男人",
    "",
    " \t ",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  file.set(fuzz::as_text(data, size));
  std::unique_ptr<Tokenizer> tok;
  try {
    tok = std::make_unique<Tokenizer>(file.path());
  } catch (const Error&) {
    return 0;
  }
  const int n = tok->vocab_size();
  try {
    for (const char* text : kText) {
      const std::vector<int32_t> ids = tok->encode(text);
      for (int32_t id : ids)
        if (id < 0 || id >= n) fuzz::violated("encode gave an id outside the vocabulary");
      (void)tok->decode(ids);
    }
    for (int32_t id = 0; id < n && id < 512; ++id) (void)tok->piece_id(tok->piece(id));
    (void)tok->decode({0, 1, 2, 3, n - 1});
  } catch (const Error&) {
  }
  return 0;
}
