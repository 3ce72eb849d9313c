#include "train/ema.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace transduce {

WeightAverage::WeightAverage(const ParamList& params, float decay)
    : params_(params), decay_(decay) {
  if (!(decay > 0.0f && decay < 1.0f)) fail("--ema-decay must be in (0, 1), got {}", decay);
  for (const Param* p : params_) values_.push_back(p->value.clone());
}

float WeightAverage::decay_at(int64_t step) const {
  const double t = static_cast<double>(step);
  return std::min(decay_, static_cast<float>((1.0 + t) / (10.0 + t)));
}

void WeightAverage::update(int64_t step) {
  const float d = decay_at(step), keep = 1.0f - d;
  for (size_t i = 0; i < params_.size(); ++i) {
    float* avg = values_[i].f32();
    const float* w = params_[i]->value.f32();
    const int64_t n = values_[i].numel();
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t k = 0; k < n; ++k) avg[k] = d * avg[k] + keep * w[k];
  }
}

void WeightAverage::swap_with_parameters() {
  for (size_t i = 0; i < params_.size(); ++i) std::swap(params_[i]->value, values_[i]);
}

}  // namespace transduce
