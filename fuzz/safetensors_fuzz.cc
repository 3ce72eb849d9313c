// load_safetensors (src/io/safetensors.h) on any bytes: the header length, the JSON header and its
// entries, the data section; then, as a model directory's loaders do, the model config in the
// metadata (io::config_from_metadata). A malformed file must be a transduce::Error.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "fuzz_support.h"
#include "io/model_weights.h"
#include "io/safetensors.h"

using namespace transduce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  file.set(fuzz::as_text(data, size));
  io::SafetensorsFile loaded;
  try {
    loaded = io::load_safetensors(file.path());
  } catch (const Error&) {
    return 0;
  }
  // What was read is no more than the file holds, and every tensor is whole.
  size_t bytes = 0;
  for (const auto& [name, t] : loaded.tensors) {
    if (!t.defined() || !t.is_contiguous()) fuzz::violated("tensor '" + name + "' not usable");
    bytes += t.nbytes();
  }
  if (bytes > size) fuzz::violated("the tensors hold more bytes than the file");
  if (loaded.metadata.count("config")) {
    try {
      io::config_from_metadata(loaded, file.path());
    } catch (const Error&) {
    }
  }
  return 0;
}
