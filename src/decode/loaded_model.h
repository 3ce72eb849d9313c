// A model directory (docs/model_dir.md) loaded for translation: its config, its latest weights
// (model.safetensors) and its vocabulary (spm.model), each checked against the others.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "text/tokenizer.h"

namespace transduce {

class LoadedModel {
 public:
  // A missing, corrupt or mismatched file is a transduce::Error naming it. The model only
  // translates (its gradients are released) and computes its GEMMs in `compute`: bf16 or int8
  // copies of the weights are made here (int8 quantized per output row; see
  // Transformer::set_precision). Without `compute`, in the model's own type: fp32, or what
  // `transduce quantize` made it (the metadata's "quantization"). A model stored in int8 has no
  // fp32 weights to compute in another type: asking for one is an error.
  explicit LoadedModel(const std::string& dir, std::optional<Precision> compute = std::nullopt);

  const std::string& dir() const { return dir_; }
  // The directory's last path component: what a service calls the model.
  std::string name() const;
  Transformer& model() { return *model_; }
  const Transformer& model() const { return *model_; }
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

// Model directories loaded as an ensemble: the same pieces in the same order in every vocabulary
// (or a transduce::Error naming the first that differs, and where).
std::vector<std::unique_ptr<LoadedModel>> load_ensemble(const std::vector<std::string>& dirs,
                                                        std::optional<Precision> compute);
// The members' models, for Translator.
std::vector<Transformer*> ensemble_models(const std::vector<std::unique_ptr<LoadedModel>>& members);

}  // namespace transduce
