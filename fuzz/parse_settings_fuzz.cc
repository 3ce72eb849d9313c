// read_parse_settings (src/parse/parse_settings.h) on any MODEL_DIR/parse.json. A malformed file,
// an unknown scheme or a malformed tag lexicon must be a transduce::Error naming the file.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "fuzz_support.h"
#include "parse/parse_settings.h"
#include "parse/tree_vocab.h"

using namespace transduce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchDir dir;
  dir.write("parse.json", fuzz::as_text(data, size));
  std::optional<parse::ParseSettings> s;
  try {
    s = parse::read_parse_settings(dir.path());
  } catch (const Error&) {
    return 0;
  }
  if (!s) fuzz::violated("read_parse_settings: nullopt although parse.json exists");
  if (!parse::scheme_from_name(s->scheme) || s->beam < 1)
    fuzz::violated("read_parse_settings accepted an unknown scheme or a beam below 1");
  if (s->tag_lexicon && s->tag_lexicon->rare_below < 0)
    fuzz::violated("read_parse_settings accepted a tag lexicon with a negative rare_below");
  return 0;
}
