// An exponential moving average of the weights (Marian's --exponential-smoothing, Polyak
// averaging): after every update, ema = d * ema + (1 - d) * weights, with d = min(decay,
// (1 + t) / (10 + t)) at update t, so that the first updates, whose weights are far from
// trained, are forgotten quickly rather than averaged in with the initial weights for 1 / (1 - d)
// updates. Kept in fp32 beside the weights, saved in checkpoints (ema.safetensors), used for
// validation and written as a model of its own (MODEL_DIR/ema/).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "model/param.h"

namespace transduce {

class WeightAverage {
 public:
  // Starts from the parameters' current values.
  WeightAverage(const ParamList& params, float decay);

  // The decay applied after update `step` (1-based).
  float decay_at(int64_t step) const;
  // Folds the parameters' values after update `step` into the average.
  void update(int64_t step);
  // Exchanges the average with the parameters' values (twice restores them); the caller refreshes
  // any copies made from the values (bf16).
  void swap_with_parameters();

  float decay() const { return decay_; }
  // Parallel to the parameter list.
  const std::vector<Tensor>& values() const { return values_; }
  std::vector<Tensor>& values() { return values_; }

 private:
  ParamList params_;
  float decay_;
  std::vector<Tensor> values_;
};

}  // namespace transduce
