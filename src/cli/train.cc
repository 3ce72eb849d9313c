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
  ModelChoice model;
  TrainRequest request;  // all but the model's hyper-parameters, which `model` holds
  ConfigFlags config;
  CLI::App* cmd = nullptr;
};

// The request with what only the parsed command line knows: the model's hyper-parameters, the
// options given, and errors in flags.
TrainRequest completed_request(const TrainFlags& f) {
  TrainRequest r = f.request;
  r.model = resolve_model(f.model);
  r.given_options = given_options(*f.cmd, train_option_specs());
  r.name = [](std::string_view key) { return flag_of_key(key); };
  return r;
}

// What --dump-config prints: the configuration `train` would run with, as a --config file.
std::string resolved_config(const TrainFlags& f) {
  const TrainRequest r = completed_request(f);
  if (r.resume.empty()) return config_text(train_configuration(r, f.model, r.options, r.model));
  const std::string checkpoint = checkpoint_to_resume(r.resume);
  return config_text(train_configuration(r, f.model, resolved_train_options(r, checkpoint),
                                         io::read_model_config(r.resume)));
}

void run_train(const TrainFlags& f) {
  TrainRequest r = completed_request(f);
  // The whole configuration this run trains with, kept with the model (a --config file).
  r.on_start = train_yml_writer(r, f.model);
  train_model_on_ranks(r, f.cmd->get_parent()->get_option("--threads")->count() > 0);
}

}  // namespace

void register_train(CLI::App& app, std::function<void(const TrainLog&)> progress) {
  auto f = std::make_shared<TrainFlags>();
  TrainRequest& r = f->request;
  r.progress = std::move(progress);
  CLI::App* cmd = app.add_subcommand("train", "train a model on parallel text (section 5)");
  f->cmd = cmd;
  add_model_flags(*cmd, f->model, /*with_vocab_size=*/false);
  add_option_flags(*cmd, train_request_specs(), r);
  add_option_flags(*cmd, train_option_specs(), r.options);
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
