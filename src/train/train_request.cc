#include "train/train_request.h"

#include "core/shortest_float.h"
#include "parse/tree_vocab.h"

namespace transduce {

namespace {

std::vector<OptionSpec<TrainRequest>> make_request_specs() {
  using namespace option;
  using R = TrainRequest;
  return {
      text<R>("src", "training source text, one sentence a line", &R::src),
      text<R>("tgt", "training target text, aligned with --src", &R::tgt),
      text<R>("valid_src", "validation source text", &R::valid_src),
      text<R>("valid_tgt", "validation target text", &R::valid_tgt),
      text<R>("trees",
              "train a parser instead: a treebank (Penn Treebank brackets); the vocabulary must "
              "come from `transduce vocab --trees`",
              &R::trees),
      text<R>("valid_trees", "a parser's validation treebank", &R::valid_trees),
      text_choice<R>("tree_scheme",
                     "a new parser's target: brackets with each word as XX (xx), as itself "
                     "(words), or as its part-of-speech tag and itself (tagged: the parser "
                     "writes real tags; tagged-after: the tag after the word)",
                     &R::tree_scheme,
                     {std::begin(parse::kSchemeNames), std::end(parse::kSchemeNames)}),
      switch_<R>("subtrees",
                 "a parser's data augmentation: also train on every constituent of two or more "
                 "words as a sentence of its own",
                 &R::subtrees),
      number<R>("word_swaps",
                "a parser's data augmentation: add this many copies of the training trees in "
                "which words of open-class tags are replaced by other words of the same tag",
                &R::word_swaps, within(0, 100)),
      number<R>("word_swap_rate", "the share of open-class words --word-swaps replaces",
                &R::word_swap_rate, within(0, 1)),
      text<R>("vocab", "directory made by `transduce vocab`", &R::vocab),
      with_short_flag(text<R>("output", "model directory to create", &R::output), "-o"),
      text<R>("resume", "model directory to continue training", &R::resume),
      number<R>("max_len", "skip pairs with a side longer than this (tokens)", &R::max_len,
                at_least(1)),
      number<R>("dist_timeout",
                "under mpirun: seconds to wait for the other ranks before giving up",
                &R::dist_timeout, above(0)),
  };
}

}  // namespace

const std::vector<OptionSpec<TrainRequest>>& train_request_specs() {
  static const std::vector<OptionSpec<TrainRequest>> specs = make_request_specs();
  return specs;
}

std::vector<std::pair<std::string, std::optional<nlohmann::json>>> train_configuration(
    const TrainRequest& request, const ModelChoice& model, const TrainOptions& options,
    const ModelConfig& config) {
  nlohmann::json built = config;
  // config.json leaves out the settings that are off; a configuration lists every one.
  built["attention_window"] = config.attention_window;
  built["src_word_dropout"] = config.src_word_dropout;
  built["tgt_word_dropout"] = config.tgt_word_dropout;
  std::vector<std::pair<std::string, std::optional<nlohmann::json>>> entries;
  for (const OptionSpec<ModelChoice>& spec : model_choice_specs()) {
    if (spec.key == "vocab_size") continue;  // the vocabulary's
    nlohmann::json v = built.contains(spec.key) ? built[spec.key] : spec.get(model);
    // Shortest text of the float the model holds: 0.1, not 0.10000000149011612.
    if (v.is_number_float()) v = shortest_float(v.get<float>());
    entries.emplace_back(spec.key, v);
  }
  for (const OptionSpec<TrainRequest>& spec : train_request_specs()) {
    const nlohmann::json v = spec.get(request);
    if (v.is_string() && v.get_ref<const std::string&>().empty())
      entries.emplace_back(spec.key, std::nullopt);
    else
      entries.emplace_back(spec.key, v);
  }
  for (const TrainOptionSpec& spec : train_option_specs())
    entries.emplace_back(spec.key, spec.get(options));
  return entries;
}

}  // namespace transduce
