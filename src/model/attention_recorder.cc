#include "model/attention_recorder.h"

namespace transduce {

void AttentionRecorder::record(const std::string& name, const Tensor& weights) {
  calls_[name].push_back(weights.clone());
}

const std::vector<Tensor>& AttentionRecorder::calls(const std::string& name) const {
  static const std::vector<Tensor> none;
  const auto it = calls_.find(name);
  return it == calls_.end() ? none : it->second;
}

}  // namespace transduce
