// Position information added to the embeddings: the fixed sinusoids of section 3.5, or a
// learned table (Table 3 row E).
#pragma once

#include "model/config.h"
#include "model/param.h"

namespace transduce {

// PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).
Tensor sinusoid_table(int64_t positions, int64_t d_model);

class PositionalEncoding {
 public:
  // `name` prefixes the learned table ("encoder.positions" -> "encoder.positions.weight").
  PositionalEncoding(const std::string& name, const ModelConfig& config);

  // x [B, L, d] += table[offset .. offset + L).
  void add(const Tensor& x, int64_t offset = 0) const;
  // Accumulates the learned table's gradient (no-op for sinusoids).
  void backward(const Tensor& dx, int64_t offset = 0);
  void collect(ParamList& out);
  bool learned() const { return learned_; }

  Param table;  // learned: a parameter; sinusoidal: a constant (not collected)

 private:
  bool learned_;
};

}  // namespace transduce
