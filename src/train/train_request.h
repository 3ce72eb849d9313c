// What a training run is asked to do (train/run.h runs it): the data, the directories, the
// model's hyper-parameters and the training options, with the request's own settings declared
// once (train_request_specs()) beside the training options' and the model's, and the whole
// configuration a run is written down as.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/option_spec.h"
#include "model/config.h"
#include "model/model_choice.h"
#include "train/train_options.h"
#include "train/trainer.h"

namespace transduce {

struct TrainRequest {
  // The data: parallel text (src and tgt, validated on valid_src and valid_tgt) or, for a parser,
  // a treebank (trees, validated on valid_trees).
  std::string src, tgt, valid_src, valid_tgt;
  std::string trees, valid_trees;
  std::string tree_scheme = "tagged";  // a new parser's target: parse::kSchemeNames
  bool subtrees = false;               // a parser's augmentations (train/training_data.h)
  int word_swaps = 0;
  double word_swap_rate = 0.2;
  // A new model: its directory and the vocabulary's (made by `transduce vocab`); or a model
  // directory to resume.
  std::string vocab, output, resume;
  int max_len = 256;          // pairs with a side longer than this (tokens) are skipped
  double dist_timeout = 600;  // under mpirun: seconds to wait for the other ranks
  ModelConfig model;  // a new model's hyper-parameters; vocab_size comes from the vocabulary
  TrainOptions options;
  // The keys of the options given for this run: a resumed run trains with its saved options,
  // these overriding them.
  std::set<std::string> given_options;

  // Every log record (train_log.jsonl's), on rank 0.
  std::function<void(const TrainLog&)> progress;
  // Called on rank 0, before the data is read, with the options and the model this run trains
  // with (the command line writes its configuration file here).
  std::function<void(const std::string& model_dir, const TrainOptions&, const ModelConfig&)>
      on_start;
  // How errors name a setting: by its key, or as the caller spells it (a flag).
  std::function<std::string(std::string_view key)> name = [](std::string_view key) {
    return std::string(key);
  };
};

// The request's settings other than the model and the training options (src, tgt, ..., output,
// dist_timeout), declared once for `transduce train`'s flags, configuration files and Python.
const std::vector<OptionSpec<TrainRequest>>& train_request_specs();

// A training run's whole configuration, each setting with its value (none: not set), in the order
// `transduce train --help` lists them: the model's hyper-parameters as built (`config`; the
// preset as chosen), the request's settings, then the training options. What train.yml and
// --dump-config hold, and what a configuration file may set.
std::vector<std::pair<std::string, std::optional<nlohmann::json>>> train_configuration(
    const TrainRequest& request, const ModelChoice& model, const TrainOptions& options,
    const ModelConfig& config);

}  // namespace transduce
