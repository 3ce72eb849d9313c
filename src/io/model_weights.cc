#include "io/model_weights.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/bf16.h"
#include "core/error.h"
#include "ops/ops.h"

namespace transduce::io {

namespace {

// Gives `p` the int8 matrix `q` with its "<name>_scale" tensor from `file` (marked used).
void load_int8(Param* p, const Tensor& q, const SafetensorsFile& file, const std::string& path,
               std::set<std::string>& used) {
  const std::string scale_name = p->name + "_scale";
  auto s = file.tensors.find(scale_name);
  if (s == file.tensors.end())
    fail("{}: int8 tensor '{}' has no scales: the file has no tensor '{}'", path, p->name,
         scale_name);
  const Tensor& scales = s->second;
  if (scales.dtype() != DType::F32 || scales.ndim() != 1 || scales.dim(0) != q.dim(0))
    fail("{}: tensor '{}' should be F32 [{}] (a scale for each row of '{}'), not {} {}", path,
         scale_name, q.dim(0), p->name, dtype_name(scales.dtype()), scales.shape().str());
  p->int8 = {q.clone(), scales.clone(), nullptr};
  used.insert(scale_name);
}

}  // namespace

void load_weights(Transformer& model, const SafetensorsFile& file, const std::string& path,
                  bool strict) {
  std::set<std::string> used;
  for (Param* p : model.parameters()) {
    auto it = file.tensors.find(p->name);
    if (it == file.tensors.end())
      fail("{}: the model needs tensor '{}' but the file has none", path, p->name);
    const Tensor& t = it->second;
    if (t.shape() != p->value.shape())
      fail("{}: tensor '{}' has shape {}, the model expects {}", path, p->name, t.shape().str(),
           p->value.shape().str());
    used.insert(p->name);
    if (t.dtype() == DType::F32) {
      p->value.copy_from(t);
    } else if (t.dtype() == DType::I8 && p->gemm_weight) {
      load_int8(p, t, file, path, used);
    } else if (t.dtype() == DType::BF16 && p->gemm_weight) {
      const uint16_t* from = t.bf16();
      float* to = p->value.f32();
      for (int64_t i = 0; i < t.numel(); ++i) to[i] = bf16_to_float(from[i]);
    } else {
      fail("{}: tensor '{}' is {}, expected F32{}", path, p->name, dtype_name(t.dtype()),
           p->gemm_weight ? " (or I8 with scales, or BF16)" : "");
    }
  }
  if (strict)
    for (const auto& [name, t] : file.tensors)
      if (!used.count(name)) fail("{}: tensor '{}' is not a parameter of this model", path, name);
}

TensorShapes shapes_of(const ParamList& params) {
  TensorShapes shapes;
  for (const Param* p : params) shapes.emplace_back(p->name, p->value.shape());
  return shapes;
}

TensorShapes shapes_of(const std::map<std::string, Tensor>& tensors) {
  TensorShapes shapes;
  for (const auto& [name, t] : tensors) shapes.emplace_back(name, t.shape());
  return shapes;
}

void expect_tensors(const std::map<std::string, Tensor>& tensors, const TensorShapes& wanted,
                    const std::string& path, std::initializer_list<std::string_view> prefixes,
                    bool exact) {
  std::set<std::string> expected;
  for (const auto& [name, shape] : wanted) {
    for (std::string_view prefix : prefixes) {
      const std::string key = std::string(prefix) + name;
      const auto it = tensors.find(key);
      if (it == tensors.end()) fail("{}: tensor '{}' is needed but the file has none", path, key);
      const Tensor& t = it->second;
      if (t.dtype() != DType::F32)
        fail("{}: tensor '{}' is {}, expected F32", path, key, dtype_name(t.dtype()));
      if (t.shape() != shape)
        fail("{}: tensor '{}' has shape {}, expected {}", path, key, t.shape().str(), shape.str());
      expected.insert(key);
    }
  }
  if (exact && expected.size() != tensors.size())
    for (const auto& [name, t] : tensors)
      if (!expected.count(name)) fail("{}: tensor '{}' is not expected here", path, name);
}

void save_weights(const Transformer& model, const std::string& path,
                  std::map<std::string, std::string> metadata) {
  std::map<std::string, Tensor> tensors;
  for (const Param* p : model.parameters()) tensors.emplace(p->name, p->value);
  metadata["config"] = nlohmann::json(model.config()).dump();
  save_safetensors(path, tensors, metadata);
}

int save_quantized(const Transformer& model, const std::string& path, Precision type,
                   std::map<std::string, std::string> metadata) {
  TD_CHECK(type == Precision::INT8 || type == Precision::BF16, "save_quantized in {}",
           precision_name(type));
  std::map<std::string, Tensor> tensors;
  int reduced = 0;
  for (const Param* p : model.parameters()) {
    if (type == Precision::INT8 && !p->value.defined()) {
      ++reduced;
      TD_CHECK(p->int8.q.defined(), "{} has neither fp32 nor int8 weights", p->name);
      tensors.emplace(p->name, p->int8.q);
      tensors.emplace(p->name + "_scale", p->int8.scales);
    } else if (type == Precision::BF16 && p->gemm_weight && p != &model.embedding.weight) {
      ++reduced;
      Tensor low = Tensor::empty(p->value.shape(), DType::BF16);
      ops::to_bf16(p->value, low);
      tensors.emplace(p->name, low);
    } else {
      tensors.emplace(p->name, p->value);
    }
  }
  metadata["config"] = nlohmann::json(model.config()).dump();
  metadata["quantization"] = std::string(precision_name(type));
  save_safetensors(path, tensors, metadata);
  return reduced;
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
