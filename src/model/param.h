// A named trainable tensor and its gradient.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/int8_matrix.h"
#include "ops/packed_weights.h"

namespace transduce {

struct Param {
  std::string name;  // as stored in model.safetensors, e.g. "encoder.layers.0.ffn.fc1.weight"
  Tensor value;
  Tensor grad;
  // Weights that GEMMs read (Linear layers, the shared embedding). When the model computes in bf16
  // (Transformer::set_precision) they also hold `bf16`, `value` rounded to bf16, which those GEMMs
  // use; whoever changes `value` refreshes it (Adam does in its update's pass).
  bool gemm_weight = false;
  Tensor bf16;
  // An int8 model's (inference only, Transformer::set_precision): `value` quantized per row and
  // packed; the GEMMs read it, and a Linear layer's `value` is then released.
  ops::Int8Matrix int8;
  // A translating model's GEMM weights (Transformer::pack_for_inference): `bf16` (a bf16 model) or
  // `value` copied into the layout oneDNN's product reads, so that no product packs them again.
  // Products read it only when translating (Context::inference); a change of precision drops it.
  ops::PackedWeights packed;

  Param() = default;
  Param(std::string n, const Shape& shape)
      : name(std::move(n)), value(Tensor::zeros(shape)), grad(Tensor::zeros(shape)) {}
};

using ParamList = std::vector<Param*>;

}  // namespace transduce
