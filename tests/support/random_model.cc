#include "support/random_model.h"

#include <filesystem>
#include <stdexcept>

#include "core/arena.h"
#include "core/rng.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "model/transformer.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"

namespace transduce::testing {

namespace fs = std::filesystem;

void init_untrained(Transformer& model, uint64_t seed) {
  model.init_parameters(seed);
  SplitMix64 rng(hash_u64(seed, /*stream=*/0xB1A5, 0));
  for (Param* p : model.parameters()) {
    const std::string& name = p->name;
    const bool bias = name.ends_with(".bias");
    const bool gain = name.ends_with("norm.weight");
    if (!bias && !gain) continue;
    float* v = p->value.f32();
    for (int64_t i = 0; i < p->value.numel(); ++i)
      v[i] = (gain ? 1.0f : 0.0f) + rng.uniform(-0.5f, 0.5f);
  }
}

ModelConfig precision_test_config() {
  ModelConfig c;
  c.layers = 2;
  c.d_model = 128;
  c.d_ff = 512;
  c.heads = 4;
  c.d_k = c.d_v = 32;
  c.dropout = 0.0f;
  c.label_smoothing = 0.1f;
  c.vocab_size = 1000;
  c.max_positions = 64;
  return c;
}

Tensor translation_logits(Transformer& model) {
  SplitMix64 rng(23);
  const int64_t b = 12, ls = 20, lt = 18;
  Tensor src = Tensor::empty({b, ls}, DType::I32), tgt = Tensor::empty({b, lt}, DType::I32);
  for (int64_t i = 0; i < src.numel(); ++i)
    src.i32()[i] = static_cast<int32_t>(rng.randint(4, 999));
  for (int64_t i = 0; i < tgt.numel(); ++i)
    tgt.i32()[i] = static_cast<int32_t>(rng.randint(4, 999));
  Arena arena;
  Context ctx(arena);
  ctx.inference = true;
  const Tensor src_pad = model.padding_mask(ctx, src), tgt_pad = model.padding_mask(ctx, tgt);
  const Tensor memory = model.encode(ctx, src, src_pad);
  return model.decode(ctx, tgt, tgt_pad, memory, src_pad).clone();
}

ModelConfig tiny_config() {
  ModelConfig c;
  c.layers = 1;
  c.d_model = 8;
  c.d_ff = 12;
  c.heads = 2;
  c.d_k = 4;
  c.d_v = 4;
  c.vocab_size = 13;
  c.max_positions = 16;
  return c;
}

ModelConfig small_random_config(int vocab_size) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 2;
  c.d_model = 32;
  c.d_ff = 48;
  c.heads = 4;
  c.d_k = c.d_v = 8;
  c.dropout = 0;
  c.vocab_size = vocab_size;
  c.max_positions = 128;
  return c;
}

void write_random_model(const std::string& vocab_dir, const std::string& model_dir, uint64_t seed) {
  const std::string spm = (fs::path(vocab_dir) / "spm.model").string();
  const Tokenizer tokenizer(spm);
  Transformer model(small_random_config(tokenizer.vocab_size()));
  init_untrained(model, seed);
  io::write_model_config(model_dir, model.config());
  io::save_weights(model, (fs::path(model_dir) / "model.safetensors").string());
  fs::copy_file(spm, fs::path(model_dir) / "spm.model", fs::copy_options::overwrite_existing);
}

RandomModelDir::RandomModelDir(const std::string& prefix, uint64_t seed) : dir_(prefix) {
  write_toy_corpus(dir_.path());
  const std::string failed = make_toy_vocab(dir_.path());
  if (!failed.empty()) throw std::runtime_error("transduce vocab failed: " + failed);
  write_random_model(vocab(), model(), seed);
}

}  // namespace transduce::testing
