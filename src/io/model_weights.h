// Moving a model's parameters to and from safetensors files, by parameter name.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/safetensors.h"
#include "model/transformer.h"

namespace transduce::io {

// Copies every parameter of `model` from `file`. A missing tensor, or one of another shape or
// dtype, is an error naming it; with `strict`, so is a tensor the model does not have. A weight
// that enters products (Param::gemm_weight) may also be stored as `transduce quantize` writes it:
// I8 with its scales in "<name>_scale" (F32, one per row), which becomes the parameter's int8
// matrix (Transformer::set_precision(INT8) packs it rather than quantizing), or BF16, whose
// numbers fp32 holds exactly.
void load_weights(Transformer& model, const SafetensorsFile& file, const std::string& path,
                  bool strict = true);
// Writes the parameters (atomically), with the model config as "config" in the metadata.
void save_weights(const Transformer& model, const std::string& path,
                  std::map<std::string, std::string> metadata = {});
// Writes a translating model as `transduce quantize` does: with `type` INT8, every weight the
// model holds only in int8 (set_precision(INT8) released its fp32 value) as I8 and
// "<name>_scale"; with BF16, every linear layer's weight as BF16; the rest F32 (the embedding
// too: its lookups read fp32 rows, and its products round it at load). The metadata says
// "quantization": "int8" or "bf16". Returns how many weight matrices it wrote in `type`.
int save_quantized(const Transformer& model, const std::string& path, Precision type,
                   std::map<std::string, std::string> metadata = {});
// The names and shapes of the tensors a file must hold.
using TensorShapes = std::vector<std::pair<std::string, Shape>>;
TensorShapes shapes_of(const ParamList& params);
TensorShapes shapes_of(const std::map<std::string, Tensor>& tensors);
// The one check of a file's tensors against what they should be: for every wanted (name, shape)
// and every prefix, an F32 tensor "<prefix><name>" of that shape (Adam's moments are "m.<name>"
// and "v.<name>"); with `exact`, nothing else. Fails with one line naming `path` and the tensor.
void expect_tensors(const std::map<std::string, Tensor>& tensors, const TensorShapes& wanted,
                    const std::string& path,
                    std::initializer_list<std::string_view> prefixes = {""}, bool exact = true);
// The ModelConfig stored in a file's "config" metadata.
ModelConfig config_from_metadata(const SafetensorsFile& file, const std::string& path);

}  // namespace transduce::io
