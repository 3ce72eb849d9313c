// Finite-difference checks of analytic gradients, and small helpers to fill tensors.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"

namespace transduce::testing {

void fill_uniform(const Tensor& t, SplitMix64& rng, float lo = -1.0f, float hi = 1.0f);
Tensor random_tensor(const Shape& shape, SplitMix64& rng, float lo = -1.0f, float hi = 1.0f);
// An F32 tensor of `shape` holding `values` (row-major).
Tensor from(const Shape& shape, const std::vector<float>& values);
// sum_i a[i] * b[i] in double.
double dot(const Tensor& a, const Tensor& b);

struct GradTarget {
  std::string name;
  Tensor value;  // perturbed in place, restored after
  Tensor grad;   // the analytic gradient of the same loss
};

struct GradCheckOptions {
  int samples = 12;  // coordinates checked per tensor (all when the tensor is smaller)
  // Small enough that ReLU kinks are rarely crossed, large enough for float32 round-off.
  float eps = 1e-3f;
  // |numeric - analytic| <= rtol * |analytic| + atol * scale + floor, where scale is the
  // tensor's largest |analytic| entry and floor covers float32 round-off of the loss divided by
  // the step (it matters only for gradients that are zero in exact arithmetic).
  double rtol = 2e-2;
  double atol = 2e-3;
  double floor = 5e-4;
  uint64_t seed = 7;
};

// For each target, compares (loss(v + eps e_i) - loss(v - eps e_i)) / 2eps with grad[i] at sampled
// coordinates i, and checks a random direction through the whole tensor. Reports failures
// through GoogleTest, naming the tensor and coordinate.
void expect_gradients_match(const std::function<double()>& loss,
                            const std::vector<GradTarget>& targets,
                            const GradCheckOptions& options = {});

}  // namespace transduce::testing
