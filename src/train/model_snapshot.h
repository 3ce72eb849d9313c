// MODEL_DIR/best/ and MODEL_DIR/ema/: weights kept beside the checkpoints as model directories of
// their own, replaced whole (train/checkpoint.h for the layout).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/transformer.h"

namespace transduce {

// Writes MODEL_DIR/<name>/ as a model directory of its own: the model's current weights,
// config.json, and spm.model and parse.json copied from MODEL_DIR, plus `info` as <name>.json. It
// is built in a temporary directory and swapped into place in one rename, so that a reader (or a
// crash) finds the previous one whole or the new one whole.
void save_model_snapshot(const std::string& model_dir, const std::string& name,
                         const Transformer& model, const nlohmann::json& info);

}  // namespace transduce
