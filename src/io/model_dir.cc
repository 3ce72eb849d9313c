#include "io/model_dir.h"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/directory.h"

namespace transduce::io {

std::string model_file(const std::string& model_dir, const char* file) {
  return (std::filesystem::path(model_dir) / file).string();
}

void write_model_config(const std::string& model_dir, const ModelConfig& config) {
  make_directory(model_dir);
  const nlohmann::json j = config;
  write_file_atomically(model_file(model_dir, kConfigFile), j.dump(2) + "\n");
}

ModelConfig read_model_config(const std::string& model_dir) {
  const std::string path = model_file(model_dir, kConfigFile);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail("{}: missing: {} is not a model directory", path, model_dir);
  const nlohmann::json j =
      nlohmann::json::parse(read_whole_file(path, "the model config"), nullptr, false);
  if (j.is_discarded()) fail("{}: not valid JSON", path);
  if (!j.is_object()) fail("{}: should hold a JSON object, not {}", path, j.type_name());
  ModelConfig c;
  try {
    c = j.get<ModelConfig>();
    c.validate();
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  } catch (const nlohmann::json::exception& e) {
    fail("{}: a field has the wrong type: {}", path, e.what());
  }
  return c;
}

}  // namespace transduce::io
