#include "model/model_choice.h"

#include "core/error.h"

namespace transduce {

namespace {

std::vector<OptionSpec<ModelChoice>> make_specs() {
  using namespace option;
  using M = ModelChoice;
  return {
      text_choice<M>("preset", "base | big | tiny", &M::preset, {"base", "big", "tiny"}),
      optional_number<M>("layers", "N: layers in the encoder and in the decoder", &M::layers),
      optional_number<M>("d_model", "d_model", &M::d_model),
      optional_number<M>("d_ff", "d_ff: inner size of the feed-forward networks", &M::d_ff),
      optional_number<M>("heads", "h: attention heads", &M::heads),
      optional_number<M>("d_k", "d_k: query/key size per head (default d_model / h)", &M::d_k),
      optional_number<M>("d_v", "d_v: value size per head (default d_model / h)", &M::d_v),
      optional_number<M>("dropout", "P_drop: residual and embedding dropout", &M::dropout),
      optional_number<M>("attention_dropout", "dropout on attention weights",
                         &M::attention_dropout),
      optional_number<M>("relu_dropout", "dropout after the feed-forward ReLU", &M::relu_dropout),
      optional_number<M>("src_word_dropout",
                         "word dropout: each source token's embedding zeroed whole with this "
                         "probability in training (Marian's --dropout-src)",
                         &M::src_word_dropout),
      optional_number<M>("tgt_word_dropout",
                         "word dropout of the decoder's input tokens (Marian's --dropout-trg)",
                         &M::tgt_word_dropout),
      optional_number<M>("label_smoothing", "eps_ls", &M::label_smoothing),
      optional_choice<M>("positions", "sinusoidal | learned", &M::positions,
                         {"sinusoidal", "learned"}),
      optional_choice<M>("norm", "post (the paper) | pre", &M::norm, {"post", "pre"}),
      optional_number<M>("vocab_size", "shared vocabulary size", &M::vocab_size),
      optional_number<M>("max_positions", "longest sequence the model accepts", &M::max_positions),
      optional_number<M>("attention_window",
                         "restricted self-attention: each position attends to the positions at "
                         "most this far away (the decoder's: before it), in training and decoding "
                         "(0: all)",
                         &M::attention_window),
  };
}

}  // namespace

ModelConfig ModelChoice::resolve() const {
  ModelConfig c = ModelConfig::preset(preset);
  if (layers) c.layers = *layers;
  if (d_model) c.d_model = *d_model;
  if (d_ff) c.d_ff = *d_ff;
  if (heads) c.heads = *heads;
  if (d_model || heads) {
    if (c.d_model % c.heads != 0 && (!d_k || !d_v))
      fail("d_model {} is not divisible by heads {}: give d_k and d_v", c.d_model, c.heads);
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
  if (vocab_size) c.vocab_size = *vocab_size;
  if (max_positions) c.max_positions = *max_positions;
  if (attention_window) c.attention_window = *attention_window;
  c.validate();
  return c;
}

const std::vector<OptionSpec<ModelChoice>>& model_choice_specs() {
  static const std::vector<OptionSpec<ModelChoice>> specs = make_specs();
  return specs;
}

std::vector<std::string> model_choice_keys(bool with_vocab_size) {
  std::vector<std::string> keys;
  for (const OptionSpec<ModelChoice>& s : model_choice_specs())
    if (with_vocab_size || s.key != "vocab_size") keys.push_back(s.key);
  return keys;
}

}  // namespace transduce
