#include "train/adam.h"

#include <algorithm>
#include <cmath>

#include "core/phase_clock.h"
#include "ops/ops.h"

namespace transduce {

Adam::Adam(const ParamList& params, AdamOptions options) : params_(params), o_(options) {
  for (const Param* p : params_) {
    m_.push_back(Tensor::zeros(p->value.shape()));
    v_.push_back(Tensor::zeros(p->value.shape()));
  }
}

void Adam::step(float lr) {
  const PhaseScope phase(Phase::kUpdate);
  ++t_;
  for (size_t i = 0; i < params_.size(); ++i)
    ops::adam_update(params_[i]->value, params_[i]->grad, m_[i], v_[i], lr, o_.beta1, o_.beta2,
                     o_.eps, t_, params_[i]->bf16);
}

float noam_learning_rate(int64_t step, int d_model, int warmup, float scale) {
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(std::max(warmup, 1));
  return static_cast<float>(scale * std::pow(d_model, -0.5) *
                            std::min(std::pow(s, -0.5), s * std::pow(w, -1.5)));
}

}  // namespace transduce
