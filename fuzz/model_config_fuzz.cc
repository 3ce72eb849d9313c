// read_model_config (src/io/model_dir.h) on any MODEL_DIR/config.json, and what a loader does
// with the config it returns (its parameter count). A malformed or out-of-range config must be a
// transduce::Error naming the file.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "fuzz_support.h"
#include "io/model_dir.h"
#include "model/config.h"

using namespace transduce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchDir dir;
  dir.write("config.json", fuzz::as_text(data, size));
  ModelConfig c;
  try {
    c = io::read_model_config(dir.path());
  } catch (const Error&) {
    return 0;
  }
  // validate() has passed: the documented ranges hold.
  if (c.layers <= 0 || c.d_model <= 0 || c.d_ff <= 0 || c.heads <= 0 || c.d_k <= 0 || c.d_v <= 0 ||
      c.vocab_size <= 0 || c.max_positions <= 0 || c.pad_id < 0 || c.pad_id >= c.vocab_size)
    fuzz::violated("read_model_config returned a config that validate() should have refused");
  (void)c.parameter_count();
  return 0;
}
