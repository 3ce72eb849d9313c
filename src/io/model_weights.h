// Moving a model's parameters to and from safetensors files, by parameter name.
#pragma once

#include <map>
#include <string>

#include "io/safetensors.h"
#include "model/transformer.h"

namespace transduce::io {

// Copies every parameter of `model` from `file`. A missing tensor, or one of another shape or
// dtype, is an error naming it; with `strict`, so is a tensor the model does not have.
void load_weights(Transformer& model, const SafetensorsFile& file, const std::string& path,
                  bool strict = true);
// Writes the parameters (atomically), with the model config as "config" in the metadata.
void save_weights(const Transformer& model, const std::string& path,
                  std::map<std::string, std::string> metadata = {});
// The ModelConfig stored in a file's "config" metadata.
ModelConfig config_from_metadata(const SafetensorsFile& file, const std::string& path);

}  // namespace transduce::io
