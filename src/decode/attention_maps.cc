#include "decode/attention_maps.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/attention_recorder.h"
#include "text/special_ids.h"
#include "text/tokenizer.h"

namespace transduce {

namespace {

// The weights of the only sentence of one recorded call: [1, H, Lq, Lk] -> [H, Lq, Lk].
Tensor single_sentence(const Tensor& weights) {
  TD_CHECK(weights.ndim() == 4 && weights.dim(0) == 1, "recorded attention {}",
           weights.shape().str());
  return weights.reshape({weights.dim(1), weights.dim(2), weights.dim(3)});
}

// Stacks one call per decoder position (each [1, H, 1, <= width]) into [H, positions, width],
// zero past what each position could see.
Tensor stack_positions(const std::vector<Tensor>& calls, int64_t heads, int64_t width) {
  const int64_t positions = static_cast<int64_t>(calls.size());
  Tensor out = Tensor::zeros({heads, positions, width});
  for (int64_t t = 0; t < positions; ++t) {
    const Tensor& w = calls[static_cast<size_t>(t)];
    TD_CHECK(
        w.ndim() == 4 && w.dim(0) == 1 && w.dim(1) == heads && w.dim(2) == 1 && w.dim(3) <= width,
        "recorded decoder attention {} at position {}", w.shape().str(), t);
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < w.dim(3); ++j)
        out.f32()[(h * positions + t) * width + j] = w.f32()[h * w.dim(3) + j];
  }
  return out;
}

nlohmann::json pieces(const std::vector<int32_t>& ids, const Tokenizer& tokenizer) {
  nlohmann::json out = nlohmann::json::array();
  for (int32_t id : ids) out.push_back(tokenizer.piece(id));
  return out;
}

// [layer][head][query][key], rounded to 1e-6: enough for any picture, and a third of the digits.
nlohmann::json weights(const std::vector<Tensor>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const Tensor& t : layers) {
    nlohmann::json layer = nlohmann::json::array();
    for (int64_t h = 0; h < t.dim(0); ++h) {
      nlohmann::json head = nlohmann::json::array();
      for (int64_t i = 0; i < t.dim(1); ++i) {
        nlohmann::json row = nlohmann::json::array();
        const float* r = t.f32() + (h * t.dim(1) + i) * t.dim(2);
        for (int64_t j = 0; j < t.dim(2); ++j) row.push_back(std::round(double{r[j]} * 1e6) / 1e6);
        head.push_back(std::move(row));
      }
      layer.push_back(std::move(head));
    }
    out.push_back(std::move(layer));
  }
  return out;
}

}  // namespace

std::vector<int32_t> AttentionMaps::target_input() const {
  std::vector<int32_t> in{kBosId};
  if (!target.empty()) in.insert(in.end(), target.begin(), target.end() - 1);
  return in;
}

AttentionMaps attention_maps(Transformer& model, const std::vector<int32_t>& source,
                             const std::vector<int32_t>& output) {
  const ModelConfig& c = model.config();
  AttentionMaps maps;
  maps.source = source;
  maps.target = output;
  maps.target.push_back(kEosId);
  const int64_t ls = static_cast<int64_t>(source.size());
  const int64_t lt = static_cast<int64_t>(maps.target.size());
  if (ls == 0) fail("attention of an empty source");
  if (ls > c.max_positions || lt > c.max_positions)
    fail("attention of a {}-token source and a {}-token output: the model has {} positions", ls, lt,
         c.max_positions);

  AttentionRecorder recorder;
  Arena encode_arena, history_arena, step_arena;
  Context ctx(encode_arena);
  ctx.inference = true;
  ctx.attention = &recorder;
  Tensor src = ctx.alloc({1, ls}, DType::I32);
  std::copy(source.begin(), source.end(), src.i32());
  const Tensor src_pad = model.padding_mask(ctx, src);
  const Tensor memory = model.encode(ctx, src, src_pad);
  DecoderCache cache = model.start_decoding(ctx, history_arena, memory, src_pad, lt, 1);
  const std::vector<int32_t> fed = maps.target_input();
  for (int64_t t = 0; t < lt; ++t) {
    step_arena.reset();
    Context step(step_arena);
    step.inference = true;
    step.attention = &recorder;
    Tensor token = step.alloc({1}, DType::I32);
    token.i32()[0] = fed[static_cast<size_t>(t)];
    model.decode_step(step, token, cache);
  }

  for (int l = 0; l < c.layers; ++l) {
    const std::string enc = fmt::format("encoder.layers.{}.self_attn", l);
    const std::string dec = fmt::format("decoder.layers.{}.", l);
    const auto& e = recorder.calls(enc);
    const auto& s = recorder.calls(dec + "self_attn");
    const auto& x = recorder.calls(dec + "cross_attn");
    TD_CHECK(e.size() == 1 && static_cast<int64_t>(s.size()) == lt &&
                 static_cast<int64_t>(x.size()) == lt,
             "layer {} recorded {}/{}/{} attention calls for {} positions", l, e.size(), s.size(),
             x.size(), lt);
    maps.encoder_self.push_back(single_sentence(e[0]));
    maps.decoder_self.push_back(stack_positions(s, c.heads, lt));
    maps.cross.push_back(stack_positions(x, c.heads, ls));
  }
  return maps;
}

nlohmann::json attention_json(const AttentionMaps& maps, const Tokenizer& tokenizer) {
  return {{"source_tokens", pieces(maps.source, tokenizer)},
          {"target_tokens", pieces(maps.target, tokenizer)},
          {"source_ids", maps.source},
          {"target_ids", maps.target},
          {"target_input_tokens", pieces(maps.target_input(), tokenizer)},
          {"encoder_self", weights(maps.encoder_self)},
          {"decoder_self", weights(maps.decoder_self)},
          {"cross", weights(maps.cross)}};
}

}  // namespace transduce
