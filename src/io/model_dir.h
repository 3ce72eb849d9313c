// The files of a model directory (DESIGN.md principle 4: a model is a directory), named once, and
// its config.json. The whole layout is in docs/model_dir.md; checkpoints are train/checkpoint.h's.
#pragma once

#include <string>

#include "model/config.h"

namespace transduce::io {

inline constexpr const char* kConfigFile = "config.json";         // the ModelConfig as JSON
inline constexpr const char* kWeightsFile = "model.safetensors";  // the weights
inline constexpr const char* kVocabularyFile = "spm.model";       // the SentencePiece model
inline constexpr const char* kParseSettingsFile = "parse.json";   // a parser's (parse/)

// MODEL_DIR/<file>.
std::string model_file(const std::string& model_dir, const char* file);

// MODEL_DIR/config.json: written atomically (creating MODEL_DIR if needed); reading names the file
// when it is missing or malformed, and validates the config.
void write_model_config(const std::string& model_dir, const ModelConfig& config);
ModelConfig read_model_config(const std::string& model_dir);

}  // namespace transduce::io
