#include "cli/model_flags.h"

#include "core/error.h"

namespace transduce::cli {

void ModelFlags::add_to(CLI::App& app, bool with_vocab_size) {
  app.add_option("--preset", preset, "base | big | tiny")
      ->check(CLI::IsMember({"base", "big", "tiny"}))
      ->capture_default_str();
  app.add_option("--layers", layers, "N: layers in the encoder and in the decoder");
  app.add_option("--d-model", d_model, "d_model");
  app.add_option("--d-ff", d_ff, "d_ff: inner size of the feed-forward networks");
  app.add_option("--heads", heads, "h: attention heads");
  app.add_option("--d-k", d_k, "d_k: query/key size per head (default d_model / h)");
  app.add_option("--d-v", d_v, "d_v: value size per head (default d_model / h)");
  app.add_option("--dropout", dropout, "P_drop: residual and embedding dropout");
  app.add_option("--attention-dropout", attention_dropout, "dropout on attention weights");
  app.add_option("--relu-dropout", relu_dropout, "dropout after the feed-forward ReLU");
  app.add_option("--src-word-dropout", src_word_dropout,
                 "word dropout: each source token's embedding zeroed whole with this probability "
                 "in training (Marian's --dropout-src)");
  app.add_option("--tgt-word-dropout", tgt_word_dropout,
                 "word dropout of the decoder's input tokens (Marian's --dropout-trg)");
  app.add_option("--label-smoothing", label_smoothing, "eps_ls");
  app.add_option("--positions", positions, "sinusoidal | learned")
      ->check(CLI::IsMember({"sinusoidal", "learned"}));
  app.add_option("--norm", norm, "post (the paper) | pre")->check(CLI::IsMember({"post", "pre"}));
  if (with_vocab_size) app.add_option("--vocab-size", vocab, "shared vocabulary size");
  app.add_option("--max-positions", max_positions, "longest sequence the model accepts");
  app.add_option("--attention-window", attention_window,
                 "restricted self-attention: each position attends to the positions at most this "
                 "far away (the decoder's: before it), in training and decoding (0: all)");
}

ModelConfig ModelFlags::resolve() const {
  ModelConfig c = ModelConfig::preset(preset);
  if (layers) c.layers = *layers;
  if (d_model) c.d_model = *d_model;
  if (d_ff) c.d_ff = *d_ff;
  if (heads) c.heads = *heads;
  if (d_model || heads) {
    if (c.d_model % c.heads != 0 && (!d_k || !d_v))
      fail("--d-model {} is not divisible by --heads {}: give --d-k and --d-v", c.d_model, c.heads);
    c.d_k = c.d_v = c.d_model / c.heads;
  }
  if (d_k) c.d_k = *d_k;
  if (d_v) c.d_v = *d_v;
  if (dropout) c.dropout = *dropout;
  if (attention_dropout) c.attention_dropout = *attention_dropout;
  if (relu_dropout) c.relu_dropout = *relu_dropout;
  if (src_word_dropout) c.src_word_dropout = *src_word_dropout;
  if (tgt_word_dropout) c.tgt_word_dropout = *tgt_word_dropout;
  if (label_smoothing) c.label_smoothing = *label_smoothing;
  if (positions) c.positions = *positions == "learned" ? Positions::Learned : Positions::Sinusoidal;
  if (norm) c.norm = *norm == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  if (vocab) c.vocab_size = *vocab;
  if (max_positions) c.max_positions = *max_positions;
  if (attention_window) c.attention_window = *attention_window;
  c.validate();
  return c;
}

void add_compute_type(CLI::App& app, std::string& into) {
  app.add_option("--compute-type", into,
                 "fp32 | bf16 | int8: what the matrix products compute in (bf16 and int8 copies "
                 "of the weights are made at load; int8 quantizes weights per output row and "
                 "activations per row; for a model directory the default is the model's own "
                 "type: fp32, or what `transduce quantize` stored)")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
      ->capture_default_str();
}

std::optional<Precision> compute_type_choice(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_compute_type(name);
}

}  // namespace transduce::cli
