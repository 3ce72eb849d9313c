// Adam (Kingma & Ba) over a model's parameters, with the paper's settings as defaults (5.3).
#pragma once

#include <vector>

#include "model/param.h"

namespace transduce {

struct AdamOptions {
  float beta1 = 0.9f;
  float beta2 = 0.98f;
  float eps = 1e-9f;
};

class Adam {
 public:
  Adam(const ParamList& params, AdamOptions options = {});
  // One update with learning rate lr from the gradients now in the parameters.
  void step(float lr);
  int64_t steps() const { return t_; }
  // First and second moments, parallel to the parameter list: checkpoints save and restore them
  // (with set_steps) to resume exactly.
  const std::vector<Tensor>& first_moments() const { return m_; }
  const std::vector<Tensor>& second_moments() const { return v_; }
  const ParamList& parameters() const { return params_; }
  void set_steps(int64_t t) { t_ = t; }

 private:
  ParamList params_;
  AdamOptions o_;
  std::vector<Tensor> m_, v_;
  int64_t t_ = 0;
};

// Equation 3: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), times `scale`.
float noam_learning_rate(int64_t step, int d_model, int warmup, float scale = 1.0f);

}  // namespace transduce
