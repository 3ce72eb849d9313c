#include "decode/translator.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "decode/input_limit.h"
#include "text/special_ids.h"

namespace transduce {

namespace {

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

void check_options(const TranslateOptions& o) {
  if (o.batch_tokens <= 0) fail("batch_tokens must be positive, got {}", o.batch_tokens);
}

}  // namespace

Translator::Translator(Transformer& model, const Tokenizer& tokenizer, TranslateOptions options)
    : Translator(std::vector<Transformer*>{&model}, tokenizer, std::move(options)) {}

Translator::Translator(std::vector<Transformer*> models, const Tokenizer& tokenizer,
                       TranslateOptions options)
    : models_(std::move(models)), tokenizer_(tokenizer), options_(std::move(options)) {
  if (models_.empty()) fail("a translator needs at least one model");
  for (const Transformer* m : models_)
    if (tokenizer.vocab_size() != m->config().vocab_size)
      fail("the vocabulary {} has {} pieces but the model expects {}", tokenizer.path(),
           tokenizer.vocab_size(), m->config().vocab_size);
  check_options(options_);
  arenas_ = std::make_unique<SearchArenas[]>(models_.size());
}

int64_t source_limit(std::span<Transformer* const> models) {
  int64_t limit = std::numeric_limits<int64_t>::max();
  for (const Transformer* m : models)
    limit = std::min<int64_t>(limit, m->config().max_positions - 1);
  return limit;
}

int64_t Translator::source_limit() const {
  return transduce::source_limit(models_);
}

void Translator::set_options(TranslateOptions options) {
  check_options(options);
  options_ = std::move(options);
}

std::vector<std::vector<Translation>> Translator::translate(
    const std::vector<std::string>& lines, int64_t first_line,
    const std::function<void(const std::string&)>& warn, const std::vector<std::string>& prefixes,
    const std::vector<std::vector<std::string>>& constraints) {
  if (!prefixes.empty() && prefixes.size() != lines.size())
    fail("{} target prefixes for {} sentences", prefixes.size(), lines.size());
  if (!constraints.empty() && constraints.size() != lines.size())
    fail("{} lists of constraints for {} sentences", constraints.size(), lines.size());
  std::vector<std::vector<int32_t>> sources(lines.size());
  std::vector<SentenceControls> controls(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    controls[i].id = static_cast<uint64_t>(first_line - 1 + static_cast<int64_t>(i));
    if (!prefixes.empty() && !blank(prefixes[i]))
      controls[i].prefix = tokenizer_.encode(prefixes[i]);
    if (!constraints.empty())
      for (const std::string& phrase : constraints[i])
        if (!blank(phrase)) controls[i].constraints.push_back(tokenizer_.encode(phrase));
    if (blank(lines[i])) continue;
    sources[i] = tokenizer_.encode(lines[i]);
    hold_to_input_limit(sources[i], options_.search, source_limit(),
                        fmt::format("line {}", first_line + static_cast<int64_t>(i)), warn);
  }
  std::vector<std::vector<Translation>> out = translate_pieces(sources, options_, controls);
  for (size_t i = 0; i < out.size() && warn; ++i)
    if (out[i].front().constraints_unmet)
      warn(fmt::format("line {}: no output holds every constraint within the length limit",
                       first_line + static_cast<int64_t>(i)));
  return out;
}

std::vector<std::vector<Hypothesis>> search_sources(std::span<Transformer* const> models,
                                                    const std::vector<std::vector<int32_t>>& pieces,
                                                    const SearchOptions& options,
                                                    int64_t batch_tokens,
                                                    std::span<SearchArenas> arenas,
                                                    std::span<const SentenceControls> controls) {
  if (batch_tokens <= 0) fail("batch_tokens must be positive, got {}", batch_tokens);
  if (models.empty()) fail("a search needs at least one model");
  const int64_t n = static_cast<int64_t>(pieces.size());
  if (!controls.empty() && static_cast<int64_t>(controls.size()) != n)
    fail("{} sentence controls for {} sentences", controls.size(), n);
  const int64_t limit = source_limit(models);
  std::vector<std::vector<Hypothesis>> out(n);
  // Sources as the model saw them in training: subword tokens and EOS.
  std::vector<std::vector<int32_t>> sources(n);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (pieces[i].empty()) {
      out[i].push_back(Hypothesis{});
      continue;
    }
    if (static_cast<int64_t>(pieces[i].size()) > limit)
      fail("a source of {} pieces: the model takes at most {}", pieces[i].size(), limit);
    sources[i] = pieces[i];
    sources[i].push_back(kEosId);
    order.push_back(i);
  }
  // Longest first, so each batch holds sentences of similar length.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return sources[a].size() > sources[b].size(); });

  std::vector<SentenceControls> batch_controls;
  for (size_t begin = 0; begin < order.size();) {
    const int64_t width = static_cast<int64_t>(sources[order[begin]].size());
    size_t end = begin + 1;
    while (end < order.size() && static_cast<int64_t>(end - begin + 1) * width <= batch_tokens)
      ++end;
    const int64_t rows = static_cast<int64_t>(end - begin);
    Tensor src = Tensor::zeros({rows, width}, DType::I32);
    batch_controls.clear();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = order[begin + r];
      std::copy(sources[i].begin(), sources[i].end(), src.i32() + r * width);
      batch_controls.push_back(controls.empty() ? SentenceControls{{}, static_cast<uint64_t>(i)}
                                                : controls[i]);
    }
    SearchOptions search = options;
    if (search.constrain) {  // the search numbers sentences within the batch
      search.constrain = [&](int64_t row, std::span<const int32_t> prefix, float* logp) {
        options.constrain(order[begin + static_cast<size_t>(row)], prefix, logp);
      };
    }
    std::vector<std::vector<Hypothesis>> found =
        transduce::search(models, src, search, arenas, batch_controls);
    for (int64_t r = 0; r < rows; ++r) out[order[begin + r]] = std::move(found[r]);
    begin = end;
  }
  return out;
}

std::vector<std::vector<Translation>> Translator::translate_pieces(
    const std::vector<std::vector<int32_t>>& pieces, const TranslateOptions& options,
    std::span<const SentenceControls> controls) {
  check_options(options);
  // Sources over the input limit refused or cut (a copy, made only when one is over).
  const int64_t limit = input_limit(options.search, source_limit());
  std::vector<std::vector<int32_t>> held;
  if (std::any_of(pieces.begin(), pieces.end(),
                  [&](const auto& p) { return static_cast<int64_t>(p.size()) > limit; })) {
    held = pieces;
    for (size_t i = 0; i < held.size(); ++i)
      hold_to_input_limit(held[i], options.search, source_limit(), fmt::format("sources[{}]", i));
  }
  const std::vector<std::vector<int32_t>>& sources = held.empty() ? pieces : held;
  std::vector<std::vector<Hypothesis>> found =
      search_sources(models_, sources, options.search, options.batch_tokens,
                     std::span<SearchArenas>(arenas_.get(), models_.size()), controls);
  std::vector<std::vector<Translation>> out(found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    if (pieces[i].empty()) {
      out[i].push_back(Translation{});
      continue;
    }
    if (found[i].empty()) {  // the constraints could not all be met
      out[i].push_back(Translation{});
      out[i].back().constraints_unmet = true;
      continue;
    }
    for (Hypothesis& h : found[i]) {
      Translation t;
      t.text = tokenizer_.decode(h.tokens);
      t.tokens = std::move(h.tokens);
      t.score = h.score;
      t.log_prob = h.log_prob;
      t.token_log_probs = std::move(h.token_log_probs);
      const bool best = out[i].empty();
      if ((options.attention && best) || options.alignment) {
        std::vector<int32_t> source = sources[i];
        source.push_back(kEosId);
        AttentionMaps maps = attention_maps(*models_.front(), source, t.tokens);
        if (options.alignment) t.alignment = word_alignment(maps, tokenizer_);
        if (options.attention && best) t.attention = std::move(maps);
      }
      out[i].push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace transduce
