#include "model/config.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_number.h"

namespace transduce {

namespace {

// An int field of a config (see core/json_number.h).
int int_field(const nlohmann::json& j, const char* key, int fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number()) fail("config: {} must be an integer, not a {}", key, it->type_name());
  if (const std::optional<int> v = json_number<int>(*it)) return *v;
  fail("config: {} must be an integer that fits in 32 bits, got {}", key, it->dump());
}

}  // namespace

ModelConfig ModelConfig::preset(const std::string& name) {
  ModelConfig c;  // the defaults are the paper's base model
  if (name == "base") return c;
  if (name == "big") {
    c.d_model = 1024;
    c.d_ff = 4096;
    c.heads = 16;
    c.d_k = c.d_v = 64;
    c.dropout = 0.3f;
    return c;
  }
  if (name == "tiny") {
    c.layers = 3;
    c.d_model = 256;
    c.d_ff = 1024;
    c.heads = 4;
    c.d_k = c.d_v = 64;
    return c;
  }
  fail("unknown preset '{}' (expected base, big or tiny)", name);
}

void ModelConfig::validate() const {
  auto positive = [](const char* name, int v) {
    if (v <= 0) fail("{} must be positive, got {}", name, v);
  };
  positive("--layers", layers);
  positive("--d-model", d_model);
  positive("--d-ff", d_ff);
  positive("--heads", heads);
  positive("--d-k", d_k);
  positive("--d-v", d_v);
  positive("vocab size", vocab_size);
  positive("max positions", max_positions);
  if (attention_window < 0)
    fail("--attention-window must be 0 (none) or positive, got {}", attention_window);
  auto probability = [](const char* name, float p) {
    if (!(p >= 0.0f && p < 1.0f)) fail("{} must be in [0, 1), got {}", name, p);
  };
  probability("--dropout", dropout);
  probability("--attention-dropout", attention_dropout);
  probability("--relu-dropout", relu_dropout);
  probability("--src-word-dropout", src_word_dropout);
  probability("--tgt-word-dropout", tgt_word_dropout);
  probability("--label-smoothing", label_smoothing);
  if (pad_id < 0 || pad_id >= vocab_size)
    fail("pad id {} outside vocabulary {}", pad_id, vocab_size);
}

int64_t ModelConfig::parameter_count() const {
  const int64_t d = d_model, ff = d_ff, hk = int64_t{heads} * d_k, hv = int64_t{heads} * d_v;
  const int64_t attention = (d * hk + hk) * 2 + (d * hv + hv) + (hv * d + d);
  const int64_t ffn = d * ff + ff + ff * d + d;
  const int64_t layer_norm = 2 * d;
  const int64_t encoder_layer = attention + ffn + 2 * layer_norm;
  const int64_t decoder_layer = 2 * attention + ffn + 3 * layer_norm;
  int64_t total = int64_t{vocab_size} * d + layers * (encoder_layer + decoder_layer);
  if (positions == Positions::Learned) total += 2 * int64_t{max_positions} * d;
  if (norm == NormPlacement::Pre) total += 2 * layer_norm;  // final norms of both stacks
  return total;
}

std::string positions_name(Positions p) {
  return p == Positions::Sinusoidal ? "sinusoidal" : "learned";
}
std::string norm_name(NormPlacement n) {
  return n == NormPlacement::Post ? "post" : "pre";
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
  j = nlohmann::json{{"layers", c.layers},
                     {"d_model", c.d_model},
                     {"d_ff", c.d_ff},
                     {"heads", c.heads},
                     {"d_k", c.d_k},
                     {"d_v", c.d_v},
                     {"dropout", c.dropout},
                     {"attention_dropout", c.attention_dropout},
                     {"relu_dropout", c.relu_dropout},
                     {"label_smoothing", c.label_smoothing},
                     {"positions", positions_name(c.positions)},
                     {"norm", norm_name(c.norm)},
                     {"vocab_size", c.vocab_size},
                     {"max_positions", c.max_positions},
                     {"layer_norm_eps", c.layer_norm_eps},
                     {"pad_id", c.pad_id}};
  if (c.attention_window > 0) j["attention_window"] = c.attention_window;
  // Training-only settings, written when used (a model without them reads as it always did).
  if (c.src_word_dropout > 0) j["src_word_dropout"] = c.src_word_dropout;
  if (c.tgt_word_dropout > 0) j["tgt_word_dropout"] = c.tgt_word_dropout;
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
  ModelConfig d;
  c.layers = int_field(j, "layers", d.layers);
  c.d_model = int_field(j, "d_model", d.d_model);
  c.d_ff = int_field(j, "d_ff", d.d_ff);
  c.heads = int_field(j, "heads", d.heads);
  c.d_k = int_field(j, "d_k", d.d_k);
  c.d_v = int_field(j, "d_v", d.d_v);
  c.dropout = j.value("dropout", d.dropout);
  c.attention_dropout = j.value("attention_dropout", d.attention_dropout);
  c.relu_dropout = j.value("relu_dropout", d.relu_dropout);
  c.src_word_dropout = j.value("src_word_dropout", d.src_word_dropout);
  c.tgt_word_dropout = j.value("tgt_word_dropout", d.tgt_word_dropout);
  c.label_smoothing = j.value("label_smoothing", d.label_smoothing);
  const std::string pos = j.value("positions", std::string("sinusoidal"));
  if (pos == "sinusoidal")
    c.positions = Positions::Sinusoidal;
  else if (pos == "learned")
    c.positions = Positions::Learned;
  else
    fail("config: positions must be sinusoidal or learned, got '{}'", pos);
  const std::string norm = j.value("norm", std::string("post"));
  if (norm == "post")
    c.norm = NormPlacement::Post;
  else if (norm == "pre")
    c.norm = NormPlacement::Pre;
  else
    fail("config: norm must be post or pre, got '{}'", norm);
  c.vocab_size = int_field(j, "vocab_size", d.vocab_size);
  c.max_positions = int_field(j, "max_positions", d.max_positions);
  c.layer_norm_eps = j.value("layer_norm_eps", d.layer_norm_eps);
  c.pad_id = int_field(j, "pad_id", d.pad_id);
  c.attention_window = int_field(j, "attention_window", d.attention_window);
}

}  // namespace transduce
