// The public Translator over the library's LoadedModel, Translator and score_pairs.
#include <fmt/format.h>

#include <mutex>

#include "api/errors.h"
#include "core/threads.h"
#include "decode/forced_score.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "decode/translator.h"
#include "model/precision.h"

namespace transduce::api {

struct Translator::Impl {
  std::vector<std::unique_ptr<LoadedModel>> members;
  std::unique_ptr<::transduce::Translator> translator;
  std::mutex mutex;  // one search at a time on the models and their arenas
};

int set_threads(int threads) {
  return translating_errors([&] {
    ::transduce::set_threads(threads);
    return num_threads();
  });
}

Translator::Translator(const std::string& model_dir, const std::string& compute_type)
    : Translator(std::vector<std::string>{model_dir}, compute_type) {}

Translator::Translator(const std::vector<std::string>& model_dirs, const std::string& compute_type)
    : impl_(std::make_unique<Impl>()) {
  translating_errors([&] {
    if (model_dirs.empty()) fail("give at least one model directory");
    impl_->members = load_ensemble(
        model_dirs,
        compute_type.empty() ? std::nullopt : std::optional(parse_compute_type(compute_type)));
    impl_->translator = std::make_unique<::transduce::Translator>(
        ensemble_models(impl_->members), impl_->members.front()->tokenizer(),
        ::transduce::TranslateOptions{});
  });
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

std::vector<std::vector<Translation>> Translator::translate(
    const std::vector<std::string>& sentences, const TranslateOptions& options) {
  return translating_errors([&] {
    ::transduce::TranslateOptions o;
    o.search.beam = options.beam;
    o.search.alpha = options.alpha;
    o.search.nbest = options.nbest;
    o.search.max_len_a = options.max_len_a;
    o.search.max_len_b = options.max_len_b;
    apply_search_options(
        {{"max_input_len", options.max_input_len}, {"long_input", options.long_input}},
        o.search);  // checked and named as everywhere else
    o.batch_tokens = options.batch_tokens;
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->translator->set_options(o);  // checks them
    std::vector<std::vector<Translation>> out;
    for (auto& hyps : impl_->translator->translate(sentences)) {
      std::vector<Translation>& each = out.emplace_back();
      for (auto& h : hyps) each.push_back({std::move(h.text), h.score});
    }
    return out;
  });
}

std::vector<PairScore> Translator::score(const std::vector<std::string>& sources,
                                         const std::vector<std::string>& targets, float alpha) {
  return translating_errors([&] {
    if (impl_->members.size() > 1)
      fail("score takes one model: this translator is an ensemble of {}", impl_->members.size());
    LoadedModel& loaded = *impl_->members.front();
    const PiecePairs pairs =
        encode_pairs(loaded.tokenizer(), loaded.config(), sources, targets, [](int side, size_t i) {
          return fmt::format("{}[{}]", side == 0 ? "sources" : "targets", i);
        });
    std::lock_guard<std::mutex> lock(impl_->mutex);
    std::vector<PairScore> out;
    for (const auto& s : score_pairs(loaded.model(), pairs.sources, pairs.targets, alpha))
      out.push_back({s.log_prob, s.score});
    return out;
  });
}

}  // namespace transduce::api
