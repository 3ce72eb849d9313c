// `transduce train`: a model from parallel text with the recipe of section 5, or `--resume` one.
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/config_file.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/option_names.h"
#include "core/shortest_float.h"
#include "io/atomic_file.h"
#include "io/model_dir.h"
#include "train/run.h"

namespace transduce::cli {

namespace {

struct TrainFlags {
  ModelFlags model;
  TrainRequest request;  // all but the model's hyper-parameters, which `model` holds
  double dist_timeout = 600;
  ConfigFlags config;
  CLI::App* cmd = nullptr;
};

// The request with what only the parsed command line knows: the model's hyper-parameters, the
// options given, and errors in flags.
TrainRequest completed_request(const TrainFlags& f) {
  TrainRequest r = f.request;
  r.model = f.model.resolve();
  r.given_options = given_options(*f.cmd, train_option_specs());
  r.name = [](std::string_view key) { return flag_of_key(key); };
  return r;
}

// A value the command line holds as a word, as a configuration file writes it: a number or text.
nlohmann::json word_json(const std::string& word) {
  nlohmann::json v = nlohmann::json::parse(word, nullptr, false);
  return v.is_number() ? v : nlohmann::json(word);
}

// Every flag of `train` with the value the run uses: the training options resolved, the model's
// hyper-parameters as built (or, resumed, as saved), the rest as given or by default.
std::vector<ConfigEntry> config_entries(const TrainFlags& f, const TrainOptions& options,
                                        const ModelConfig& model) {
  nlohmann::json model_values = model;
  // config.json leaves out the settings that are off; a configuration file lists every key.
  model_values["attention_window"] = model.attention_window;
  model_values["src_word_dropout"] = model.src_word_dropout;
  model_values["tgt_word_dropout"] = model.tgt_word_dropout;
  std::vector<ConfigEntry> entries;
  for (const CLI::Option* opt : f.cmd->get_options()) {
    const std::string key = key_of_flag(opt->get_name());
    if (reserved_key(key)) continue;
    if (const TrainOptionSpec* spec = find_train_option(key)) {
      entries.emplace_back(key, spec->get(options));
    } else if (model_values.contains(key)) {
      nlohmann::json v = model_values[key];
      // Shortest text of the float the model holds: 0.1, not 0.10000000149011612.
      if (v.is_number_float()) v = shortest_float(v.get<float>());
      entries.emplace_back(key, v);
    } else if (is_switch(*opt)) {
      entries.emplace_back(key, opt->count() > 0);  // a switch
    } else if (opt->count() > 0) {
      const std::vector<std::string>& words = opt->results();
      entries.emplace_back(
          key, opt->get_expected_max() == 1 ? word_json(words.front()) : nlohmann::json(words));
    } else if (!opt->get_default_str().empty()) {
      entries.emplace_back(key, word_json(opt->get_default_str()));
    } else {
      entries.emplace_back(key, std::nullopt);
    }
  }
  return entries;
}

// What --dump-config prints: the configuration `train` would run with, as a --config file.
std::string resolved_config(const TrainFlags& f) {
  const TrainRequest r = completed_request(f);
  if (r.resume.empty()) return config_text(config_entries(f, r.options, r.model));
  const std::string checkpoint = checkpoint_to_resume(r.resume);
  return config_text(
      config_entries(f, resolved_train_options(r, checkpoint), io::read_model_config(r.resume)));
}

void run_train(const TrainFlags& f) {
  TrainRequest r = completed_request(f);
  // The whole configuration this run trains with, kept with the model (a --config file).
  r.on_start = [&f](const std::string& model_dir, const TrainOptions& options,
                    const ModelConfig& config) {
    io::write_file_atomically(io::model_file(model_dir, "train.yml"),
                              config_text(config_entries(f, options, config)));
  };
  train_model_on_ranks(r, f.dist_timeout,
                       f.cmd->get_parent()->get_option("--threads")->count() > 0);
}

}  // namespace

void register_train(CLI::App& app, std::function<void(const TrainLog&)> progress) {
  auto f = std::make_shared<TrainFlags>();
  TrainRequest& r = f->request;
  r.progress = std::move(progress);
  CLI::App* cmd = app.add_subcommand("train", "train a model on parallel text (section 5)");
  f->cmd = cmd;
  f->model.add_to(*cmd, /*with_vocab_size=*/false);
  cmd->add_option("--src", r.src, "training source text, one sentence a line");
  cmd->add_option("--tgt", r.tgt, "training target text, aligned with --src");
  cmd->add_option("--valid-src", r.valid_src, "validation source text");
  cmd->add_option("--valid-tgt", r.valid_tgt, "validation target text");
  cmd->add_option("--trees", r.trees,
                  "train a parser instead: a treebank (Penn Treebank brackets); the vocabulary "
                  "must come from `transduce vocab --trees`");
  cmd->add_option("--valid-trees", r.valid_trees, "a parser's validation treebank");
  cmd->add_option("--tree-scheme", r.tree_scheme,
                  "a new parser's target: brackets with each word as XX (xx) or as itself (words)")
      ->capture_default_str()
      ->check(CLI::IsMember({"xx", "words"}));
  cmd->add_flag("--subtrees", r.subtrees,
                "a parser's data augmentation: also train on every constituent of two or more "
                "words as a sentence of its own");
  cmd->add_option("--word-swaps", r.word_swaps,
                  "a parser's data augmentation: add this many copies of the training trees in "
                  "which words of open-class tags are replaced by other words of the same tag")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  cmd->add_option("--word-swap-rate", r.word_swap_rate,
                  "the share of open-class words --word-swaps replaces")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--vocab", r.vocab, "directory made by `transduce vocab`");
  cmd->add_option("-o,--output", r.output, "model directory to create");
  cmd->add_option("--resume", r.resume, "model directory to continue training");
  cmd->add_option("--max-len", r.max_len, "skip pairs with a side longer than this (tokens)")
      ->capture_default_str();
  add_option_flags(*cmd, train_option_specs(), r.options);
  cmd->add_option("--dist-timeout", f->dist_timeout,
                  "under mpirun: seconds to wait for the other ranks before giving up")
      ->capture_default_str();
  add_config_flags(*cmd, f->config);
  cmd->callback([f] {
    if (!f->config.path.empty()) apply_config_file(*f->cmd, f->config.path);
    if (f->config.dump) {
      fmt::print("{}", resolved_config(*f));
      return;
    }
    run_train(*f);
  });
}

}  // namespace transduce::cli
