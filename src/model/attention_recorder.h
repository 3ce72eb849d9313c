// Keeps the attention weights that inference computes, for the visualisations of the paper's
// Figures 3-5: each attention module hands over its weights under its parameter-name prefix
// ("encoder.layers.0.self_attn", ...), once per call, in call order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace transduce {

class AttentionRecorder {
 public:
  // Copies `weights` ([B, heads, Lq, Lk]) of the module `name`.
  void record(const std::string& name, const Tensor& weights);
  // Every call's weights for `name`, in call order; empty when the module never ran.
  const std::vector<Tensor>& calls(const std::string& name) const;
  void clear() { calls_.clear(); }

 private:
  std::map<std::string, std::vector<Tensor>> calls_;
};

}  // namespace transduce
