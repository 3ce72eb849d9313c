// A checkpoint's state.json as `transduce train --resume` reads it: latest_checkpoint
// (src/train/checkpoint.h) reads every file of each checkpoint (weights, optimizer moments, the
// state's "step") and skips, with a warning, those that do not read (a transduce::Error); then the
// command (src/cli/train.cc) takes the saved training options from the state with update_from_json
// (src/train/trainer.h) and the trainer its best validation (src/train/validation.h). The weights
// and moments are valid and fixed; state.json is the input.
// Anything but a transduce::Error escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/tensor.h"
#include "fuzz_support.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace transduce;

namespace {

// MODEL_DIR with checkpoints/step-00000007/ holding weights and moments, state.json to be written.
std::string make_model_dir(const fuzz::ScratchDir& dir) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 16;
  Tensor w = Tensor::zeros({2, 3});
  const std::string ckpt = "checkpoints/step-00000007/";
  dir.write(ckpt + "state.json", "{}");
  io::save_safetensors(dir.path() + "/" + ckpt + "model.safetensors", {{"w", w}},
                       {{"config", nlohmann::json(c).dump()}, {"step", "7"}});
  io::save_safetensors(dir.path() + "/" + ckpt + "optimizer.safetensors", {{"m.w", w}, {"v.w", w}},
                       {{"steps", "7"}});
  return ckpt + "state.json";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchDir dir;
  static const std::string state = [] {
    spdlog::set_level(spdlog::level::off);  // the warning for each checkpoint skipped
    return make_model_dir(dir);
  }();
  const std::string_view text = fuzz::as_text(data, size);
  dir.write(state, text);
  if (!latest_checkpoint(dir.path())) return 0;
  // cli/train.cc's read_state, then the options.
  const nlohmann::json saved = nlohmann::json::parse(text, nullptr, false);
  if (saved.is_discarded() || !saved.is_object())
    fuzz::violated("latest_checkpoint accepted a state.json that is not a JSON object");
  TrainOptions options;
  try {
    update_from_json(saved.value("options", nlohmann::json::object()), options);
  } catch (const Error&) {
  }
  // Trainer::restore's reading of the best validation so far (for the deciding metric).
  if (const auto best = saved.find("best_validation"); best != saved.end()) {
    try {
      best_from_json(*best, options.valid_metrics.front());
    } catch (const Error&) {
    }
  }
  return 0;
}
