#include "decode/forced_score.h"

#include <algorithm>
#include <numeric>

#include "core/arena.h"
#include "core/error.h"
#include "decode/input_limit.h"
#include "decode/search.h"
#include "ops/ops.h"
#include "text/special_ids.h"

namespace transduce {

PiecePairs encode_pairs(const Tokenizer& tokenizer, const ModelConfig& config,
                        const std::vector<std::string>& sources,
                        const std::vector<std::string>& targets,
                        const std::function<std::string(int side, size_t index)>& where,
                        const SearchOptions& input,
                        const std::function<void(const std::string&)>& warn) {
  if (sources.size() != targets.size())
    fail("{} sources and {} targets: scoring needs one target per source", sources.size(),
         targets.size());
  const int64_t limit = config.max_positions - 1;
  PiecePairs out;
  for (size_t i = 0; i < sources.size(); ++i) {
    out.sources.push_back(tokenizer.encode(sources[i]));
    hold_to_input_limit(out.sources.back(), input, limit, where(0, i), warn);
    out.targets.push_back(tokenizer.encode(targets[i]));
    const size_t pieces = out.targets.back().size();
    if (static_cast<int64_t>(pieces) > limit)
      fail("{}: {} subword pieces, more than {} (the model takes; a target is never cut)",
           where(1, i), pieces, limit);
  }
  return out;
}

std::vector<PairScore> score_pairs(Transformer& model,
                                   const std::vector<std::vector<int32_t>>& sources,
                                   const std::vector<std::vector<int32_t>>& targets, float alpha,
                                   int64_t batch_tokens) {
  if (sources.size() != targets.size())
    fail("{} sources and {} targets: scoring needs one target per source", sources.size(),
         targets.size());
  if (batch_tokens <= 0) fail("batch_tokens must be positive, got {}", batch_tokens);
  const int64_t n = static_cast<int64_t>(sources.size()), vocab = model.config().vocab_size;
  // Sources and decoder inputs take one position more than their pieces (EOS, BOS).
  const int64_t limit = model.config().max_positions - 1;
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(sources[i].size()) > limit)
      fail("pair {}: a source of {} pieces; the model takes at most {}", i + 1, sources[i].size(),
           limit);
    if (static_cast<int64_t>(targets[i].size()) > limit)
      fail("pair {}: a target of {} pieces; the model takes at most {}", i + 1, targets[i].size(),
           limit);
  }
  auto width = [&](int64_t i) {
    return static_cast<int64_t>(std::max(sources[i].size(), targets[i].size())) + 1;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Longest first, so each batch holds pairs of similar length.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return width(a) > width(b); });

  std::vector<PairScore> out(static_cast<size_t>(n));
  Arena arena;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() &&
           static_cast<int64_t>(end - begin + 1) * width(order[begin]) <= batch_tokens)
      ++end;
    const int64_t rows = static_cast<int64_t>(end - begin);
    int64_t ls = 1, lt = 1;
    for (size_t r = begin; r < end; ++r) {
      ls = std::max<int64_t>(ls, static_cast<int64_t>(sources[order[r]].size()) + 1);
      lt = std::max<int64_t>(lt, static_cast<int64_t>(targets[order[r]].size()) + 1);
    }
    arena.reset();
    Context ctx(arena);
    ctx.inference = true;
    Tensor src = ctx.zeros({rows, ls}, DType::I32), tgt_in = ctx.zeros({rows, lt}, DType::I32);
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<int32_t>& s = sources[order[begin + r]];
      const std::vector<int32_t>& t = targets[order[begin + r]];
      std::copy(s.begin(), s.end(), src.i32() + r * ls);
      src.i32()[r * ls + static_cast<int64_t>(s.size())] = kEosId;
      tgt_in.i32()[r * lt] = kBosId;
      std::copy(t.begin(), t.end(), tgt_in.i32() + r * lt + 1);
    }
    const Tensor src_pad = model.padding_mask(ctx, src);
    const Tensor memory = model.encode(ctx, src, src_pad);
    const Tensor logits =
        model.decode(ctx, tgt_in, model.padding_mask(ctx, tgt_in), memory, src_pad);
    const Tensor logp = logits.reshape({rows * lt, vocab});
    ops::log_softmax(logp, logp);
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<int32_t>& t = targets[order[begin + r]];
      PairScore& p = out[static_cast<size_t>(order[begin + r])];
      const int64_t length = static_cast<int64_t>(t.size()) + 1;  // EOS counted
      double sum = 0;
      for (int64_t j = 0; j < length; ++j) {
        const int32_t label = j < length - 1 ? t[static_cast<size_t>(j)] : kEosId;
        if (label < 0 || label >= vocab)
          fail("pair {}: target token {} is outside the vocabulary of {}", order[begin + r] + 1,
               label, vocab);
        const float lp = logp.f32()[(r * lt + j) * vocab + label];
        p.token_log_probs.push_back(lp);
        sum += lp;
      }
      p.log_prob = static_cast<float>(sum);
      p.score = p.log_prob / length_penalty(length, alpha);
    }
    begin = end;
  }
  return out;
}

}  // namespace transduce
