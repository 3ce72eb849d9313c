#include "train/checkpoint_average.h"

#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"

namespace transduce {

namespace {

// The first key whose value differs between two JSON objects, for error messages.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  for (const auto& [key, value] : a.items()) {
    auto it = b.find(key);
    if (it == b.end()) return fmt::format("{} is {} and missing", key, value.dump());
    if (*it != value) return fmt::format("{} is {} and {}", key, value.dump(), it->dump());
  }
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return fmt::format("{} is missing and {}", key, value.dump());
  return "no difference";
}

}  // namespace

void average_checkpoints(const std::vector<std::string>& checkpoint_dirs,
                         const std::string& out_path) {
  if (checkpoint_dirs.empty()) fail("{}: no checkpoints to average", out_path);
  nlohmann::json config_json;
  std::string first_path;
  io::TensorShapes shapes;
  std::map<std::string, std::vector<double>> sums;
  for (const std::string& dir : checkpoint_dirs) {
    const std::string path = io::model_file(dir, io::kWeightsFile);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) fail("{}: missing: not a checkpoint", path);
    const io::SafetensorsFile f = io::load_safetensors(path);
    const nlohmann::json config = io::config_from_metadata(f, path);
    if (first_path.empty()) {
      first_path = path;
      config_json = config;
      shapes = io::shapes_of(f.tensors);
      io::expect_tensors(f.tensors, shapes, path);  // F32 throughout
      for (const auto& [name, t] : f.tensors)
        sums.emplace(name, std::vector<double>(static_cast<size_t>(t.numel()), 0.0));
    } else {
      if (config != config_json)
        fail("{}: its model config differs from {}'s ({}): cannot average different models", path,
             first_path, first_difference(config_json, config));
      try {
        io::expect_tensors(f.tensors, shapes, path);
      } catch (const Error& e) {
        fail("{} (against {}): cannot average different tensor sets", e.what(), first_path);
      }
    }
    for (const auto& [name, t] : f.tensors) {
      std::vector<double>& sum = sums.at(name);
      const float* x = t.f32();
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<double>(x[i]);
    }
  }

  const double n = static_cast<double>(checkpoint_dirs.size());
  std::map<std::string, Tensor> mean;
  for (const auto& [name, shape] : shapes) {
    const std::vector<double>& sum = sums.at(name);
    Tensor t = Tensor::empty(shape);
    float* y = t.f32();
    for (size_t i = 0; i < sum.size(); ++i) y[i] = static_cast<float>(sum[i] / n);
    mean.emplace(name, std::move(t));
  }
  std::map<std::string, std::string> metadata;
  metadata["config"] = config_json.dump();
  metadata["averaged_from"] = nlohmann::json(checkpoint_dirs).dump();
  io::save_safetensors(out_path, mean, metadata);
}

}  // namespace transduce
