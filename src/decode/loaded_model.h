// A model directory (docs/model_dir.md) loaded for translation: its config, its latest weights
// (model.safetensors) and its vocabulary (spm.model), each checked against the others.
#pragma once

#include <memory>
#include <string>

#include "model/transformer.h"
#include "text/tokenizer.h"

namespace transduce {

class LoadedModel {
 public:
  // A missing, corrupt or mismatched file is a transduce::Error naming it.
  explicit LoadedModel(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // The directory's last path component: what a service calls the model.
  std::string name() const;
  Transformer& model() { return *model_; }
  const ModelConfig& config() const { return model_->config(); }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // The training step the weights were saved at; -1 when the file does not say.
  int64_t step() const { return step_; }

 private:
  std::string dir_;
  std::unique_ptr<Transformer> model_;
  Tokenizer tokenizer_;
  int64_t step_ = -1;
};

}  // namespace transduce
