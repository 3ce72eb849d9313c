// Every hyper-parameter of the paper's Table 3 and the architecture options, with presets.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace transduce {

enum class Positions { Sinusoidal, Learned };
enum class NormPlacement { Post, Pre };  // post: LayerNorm(x + Sublayer(x)) as in the paper

struct ModelConfig {
  int layers = 6;  // N, for the encoder and the decoder alike
  int d_model = 512;
  int d_ff = 2048;
  int heads = 8;         // h
  int d_k = 64;          // per head, queries and keys
  int d_v = 64;          // per head, values
  float dropout = 0.1f;  // P_drop: sub-layer outputs and embedding+position sums
  float attention_dropout = 0.0f;
  float relu_dropout = 0.0f;
  // Word dropout in training: each source (target input) token's embedding zeroed whole with this
  // probability, before the positions are added (Marian's --dropout-src and --dropout-trg).
  float src_word_dropout = 0.0f;
  float tgt_word_dropout = 0.0f;
  float label_smoothing = 0.1f;  // eps_ls
  Positions positions = Positions::Sinusoidal;
  NormPlacement norm = NormPlacement::Post;
  int vocab_size = 37000;  // one vocabulary shared by source and target
  int max_positions = 1024;
  // Restricted self-attention (section 4's r; 0: none): position i of the encoder attends to
  // positions j with |i - j| <= attention_window, the decoder's to i - attention_window <= j <= i.
  // Cross-attention is not restricted.
  int attention_window = 0;
  float layer_norm_eps = 1e-5f;
  int pad_id = 0;

  // Base, big or tiny (../shared/BENCHMARKS.md); throws on an unknown name.
  static ModelConfig preset(const std::string& name);
  // Throws with a clear message when a value is out of range or inconsistent.
  void validate() const;
  int64_t parameter_count() const;
};

void to_json(nlohmann::json& j, const ModelConfig& c);
void from_json(const nlohmann::json& j, ModelConfig& c);

std::string positions_name(Positions p);
std::string norm_name(NormPlacement n);

}  // namespace transduce
