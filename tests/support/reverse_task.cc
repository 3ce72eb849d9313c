#include "support/reverse_task.h"

#include "core/rng.h"

namespace transduce::testing {

std::vector<Example> reverse_task(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Example> data;
  for (int i = 0; i < n; ++i) {
    Example e;
    const int64_t len = rng.randint(3, 7);
    for (int64_t t = 0; t < len; ++t) e.src.push_back(static_cast<int32_t>(rng.randint(4, 19)));
    e.tgt.assign(e.src.rbegin(), e.src.rend());
    data.push_back(e);
  }
  return data;
}

ModelConfig reversal_config() {
  ModelConfig c;
  c.layers = 2;
  c.d_model = 32;
  c.d_ff = 64;
  c.heads = 4;
  c.d_k = c.d_v = 8;
  c.dropout = 0.0f;
  c.label_smoothing = 0.0f;
  c.vocab_size = 20;
  c.max_positions = 32;
  return c;
}

TrainOptions reversal_options() {
  TrainOptions o;
  o.batch_tokens = 256;
  o.warmup = 100;
  o.lr_scale = 0.5f;  // peak learning rate 0.5 * 32^-0.5 * 100^-0.5 = 0.009
  o.log_every = 50;
  o.valid_every = 0;
  o.save_every_minutes = 0;
  return o;
}

std::string reversal_text(const std::vector<int32_t>& ids) {
  std::string text;
  for (int32_t id : ids) {
    if (!text.empty()) text += ' ';
    text += static_cast<char>('a' + (id - 4));
  }
  return text;
}

}  // namespace transduce::testing
