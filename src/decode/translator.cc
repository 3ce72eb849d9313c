#include "decode/translator.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "train/example.h"

namespace transduce {

namespace {

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

}  // namespace

Translator::Translator(Transformer& model, const Tokenizer& tokenizer, TranslateOptions options)
    : model_(model), tokenizer_(tokenizer), options_(std::move(options)) {
  if (tokenizer.vocab_size() != model.config().vocab_size)
    fail("the vocabulary {} has {} pieces but the model expects {}", tokenizer.path(),
         tokenizer.vocab_size(), model.config().vocab_size);
  if (options_.batch_tokens <= 0)
    fail("--batch-tokens must be positive, got {}", options_.batch_tokens);
}

std::vector<std::vector<Translation>> Translator::translate(
    const std::vector<std::string>& lines, int64_t first_line,
    const std::function<void(const std::string&)>& warn) {
  const int64_t n = static_cast<int64_t>(lines.size());
  std::vector<std::vector<Translation>> out(n);
  // Sources as the model saw them in training: subword tokens and EOS.
  const int64_t longest = model_.config().max_positions;
  std::vector<std::vector<int32_t>> sources(n);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (blank(lines[i])) {
      out[i].push_back(Translation{});
      continue;
    }
    std::vector<int32_t> ids = tokenizer_.encode(lines[i]);
    if (static_cast<int64_t>(ids.size()) + 1 > longest) {
      if (warn)
        warn(fmt::format("line {}: {} tokens, more than the model's {}; cut to fit", first_line + i,
                         ids.size() + 1, longest));
      ids.resize(static_cast<size_t>(longest - 1));
    }
    ids.push_back(kEosId);
    sources[i] = std::move(ids);
    order.push_back(i);
  }
  // Longest first, so each batch holds sentences of similar length.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return sources[a].size() > sources[b].size(); });

  for (size_t begin = 0; begin < order.size();) {
    const int64_t width = static_cast<int64_t>(sources[order[begin]].size());
    size_t end = begin + 1;
    while (end < order.size() &&
           static_cast<int64_t>(end - begin + 1) * width <= options_.batch_tokens)
      ++end;
    const int64_t rows = static_cast<int64_t>(end - begin);
    Tensor src = Tensor::zeros({rows, width}, DType::I32);
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<int32_t>& s = sources[order[begin + r]];
      std::copy(s.begin(), s.end(), src.i32() + r * width);
    }
    std::vector<std::vector<Hypothesis>> found;
    if (options_.search.beam == 1 && options_.search.nbest == 1) {
      for (Hypothesis& h : greedy_search(model_, src, options_.search, &arenas_))
        found.push_back({h});
    } else {
      found = beam_search(model_, src, options_.search, &arenas_);
    }
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<Translation>& dst = out[order[begin + r]];
      for (Hypothesis& h : found[r])
        dst.push_back(Translation{tokenizer_.decode(h.tokens), std::move(h.tokens), h.score});
    }
    begin = end;
  }
  return out;
}

}  // namespace transduce
