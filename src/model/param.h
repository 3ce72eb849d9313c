// A named trainable tensor and its gradient.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace transduce {

struct Param {
  std::string name;  // as stored in model.safetensors, e.g. "encoder.layers.0.ffn.fc1.weight"
  Tensor value;
  Tensor grad;

  Param() = default;
  Param(std::string n, const Shape& shape)
      : name(std::move(n)), value(Tensor::zeros(shape)), grad(Tensor::zeros(shape)) {}
};

using ParamList = std::vector<Param*>;

}  // namespace transduce
