#include "model/positional.h"

#include <cmath>

#include "ops/ops.h"

namespace transduce {

Tensor sinusoid_table(int64_t positions, int64_t d_model) {
  Tensor t = Tensor::empty({positions, d_model});
  float* p = t.f32();
  for (int64_t pos = 0; pos < positions; ++pos) {
    for (int64_t j = 0; j < d_model; ++j) {
      const int64_t two_i = j - j % 2;
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(two_i) / d_model);
      p[pos * d_model + j] = static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return t;
}

PositionalEncoding::PositionalEncoding(const std::string& name, const ModelConfig& c)
    : learned_(c.positions == Positions::Learned) {
  if (learned_) {
    table = Param(name + ".weight", {c.max_positions, c.d_model});
  } else {
    table.name = name + ".sinusoid";
    table.value = sinusoid_table(c.max_positions, c.d_model);
  }
}

void PositionalEncoding::add(const Tensor& x, int64_t offset) const {
  ops::add_positions(x, table.value, offset);
}

void PositionalEncoding::backward(const Tensor& dx, int64_t offset) {
  if (learned_) ops::positions_grad(dx, table.grad, offset);
}

void PositionalEncoding::collect(ParamList& out) {
  if (learned_) out.push_back(&table);
}

}  // namespace transduce
