#include "io/model_weights.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace transduce::io {

void load_weights(Transformer& model, const SafetensorsFile& file, const std::string& path,
                  bool strict) {
  std::set<std::string> used;
  for (Param* p : model.parameters()) {
    auto it = file.tensors.find(p->name);
    if (it == file.tensors.end())
      fail("{}: the model needs tensor '{}' but the file has none", path, p->name);
    const Tensor& t = it->second;
    if (t.dtype() != DType::F32)
      fail("{}: tensor '{}' is {}, expected F32", path, p->name, dtype_name(t.dtype()));
    if (t.shape() != p->value.shape())
      fail("{}: tensor '{}' has shape {}, the model expects {}", path, p->name, t.shape().str(),
           p->value.shape().str());
    p->value.copy_from(t);
    used.insert(p->name);
  }
  if (strict)
    for (const auto& [name, t] : file.tensors)
      if (!used.count(name)) fail("{}: tensor '{}' is not a parameter of this model", path, name);
}

void save_weights(const Transformer& model, const std::string& path,
                  std::map<std::string, std::string> metadata) {
  std::map<std::string, Tensor> tensors;
  for (const Param* p : model.parameters()) tensors.emplace(p->name, p->value);
  metadata["config"] = nlohmann::json(model.config()).dump();
  save_safetensors(path, tensors, metadata);
}

ModelConfig config_from_metadata(const SafetensorsFile& file, const std::string& path) {
  auto it = file.metadata.find("config");
  if (it == file.metadata.end()) fail("{}: no model config in the file's metadata", path);
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    fail("{}: the config in the metadata is not a JSON object", path);
  ModelConfig c;
  try {
    c = j.get<ModelConfig>();
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type ("dropout": "x"): a transduce::Error like every other corrupt
    // file, which latest_checkpoint() skips (found with fuzz/safetensors_fuzz.cc).
    fail("{}: the config in the metadata has a field of the wrong type: {}", path, e.what());
  }
  c.validate();
  return c;
}

}  // namespace transduce::io
