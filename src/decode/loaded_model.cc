#include "decode/loaded_model.h"

#include <filesystem>

#include "core/error.h"
#include "io/model_dir.h"
#include "io/model_weights.h"

namespace transduce {

namespace fs = std::filesystem;

LoadedModel::LoadedModel(const std::string& dir, std::optional<Precision> compute)
    : dir_(dir),
      model_(std::make_unique<Transformer>(io::read_model_config(dir))),
      tokenizer_(io::model_file(dir, io::kVocabularyFile)) {
  const std::string weights = io::model_file(dir, io::kWeightsFile);
  const io::SafetensorsFile file = io::load_safetensors(weights);
  io::load_weights(*model_, file, weights);
  // The model's own type: int8 where the file held int8 weights, else what the metadata says.
  Precision stored = Precision::FP32;
  if (auto q = file.metadata.find("quantization"); q != file.metadata.end()) {
    if (q->second != "int8" && q->second != "bf16")
      fail("{}: unknown quantization '{}' in the metadata (int8 or bf16)", weights, q->second);
    stored = parse_compute_type(q->second);
  }
  for (const Param* p : model_->parameters())
    if (p->int8.q.defined()) stored = Precision::INT8;
  if (stored == Precision::INT8 && compute && *compute != Precision::INT8)
    fail(
        "{} is quantized to int8 and has no fp32 weights to compute in {}: use --compute-type "
        "int8, or the fp32 model it was made from",
        dir, precision_name(*compute));
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
  model_->release_gradients();
  model_->set_precision(compute.value_or(stored));
  model_->pack_for_inference();
}

std::string LoadedModel::name() const {
  fs::path p = fs::absolute(dir_).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "model/"
  return p.filename().string();
}

std::vector<std::unique_ptr<LoadedModel>> load_ensemble(const std::vector<std::string>& dirs,
                                                        std::optional<Precision> compute) {
  if (dirs.empty()) fail("no model given");
  std::vector<std::unique_ptr<LoadedModel>> members;
  for (const std::string& dir : dirs) {
    members.push_back(std::make_unique<LoadedModel>(dir, compute));
    const Tokenizer& first = members.front()->tokenizer();
    const Tokenizer& now = members.back()->tokenizer();
    if (now.vocab_size() != first.vocab_size())
      fail("{} and {} cannot translate together: their vocabularies have {} and {} pieces",
           dirs.front(), dir, first.vocab_size(), now.vocab_size());
    for (int32_t id = 0; id < now.vocab_size(); ++id)
      if (now.piece(id) != first.piece(id))
        fail("{} and {} cannot translate together: piece {} is '{}' in one and '{}' in the other",
             dirs.front(), dir, id, first.piece(id), now.piece(id));
  }
  return members;
}

std::vector<Transformer*> ensemble_models(
    const std::vector<std::unique_ptr<LoadedModel>>& members) {
  std::vector<Transformer*> models;
  for (const auto& m : members) models.push_back(&m->model());
  return models;
}

}  // namespace transduce
