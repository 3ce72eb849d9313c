#include "decode/loaded_model.h"

#include <filesystem>

#include "core/error.h"
#include "io/model_weights.h"
#include "train/checkpoint.h"

namespace transduce {

namespace fs = std::filesystem;

LoadedModel::LoadedModel(const std::string& dir)
    : dir_(dir),
      model_(std::make_unique<Transformer>(read_model_config(dir))),
      tokenizer_((fs::path(dir) / "spm.model").string()) {
  const std::string weights = (fs::path(dir) / "model.safetensors").string();
  const io::SafetensorsFile file = io::load_safetensors(weights);
  io::load_weights(*model_, file, weights);
  if (tokenizer_.vocab_size() != model_->config().vocab_size)
    fail("the vocabulary {} has {} pieces but the model expects {}", tokenizer_.path(),
         tokenizer_.vocab_size(), model_->config().vocab_size);
  const auto it = file.metadata.find("step");
  if (it != file.metadata.end()) {
    try {
      step_ = std::stoll(it->second);
    } catch (const std::exception&) {
      fail("{}: the step in the metadata is not a number: '{}'", weights, it->second);
    }
  }
}

std::string LoadedModel::name() const {
  fs::path p = fs::absolute(dir_).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "model/"
  return p.filename().string();
}

}  // namespace transduce
