// transduce.train(**settings): training through the library (train/run.h), its settings given as
// keyword arguments under the keys of their one declaration (the training options, the model's
// hyper-parameters and the run's data and directories: valid_metric=["bleu", "ppl"] is
// `transduce train --valid-metric bleu ppl`), a configuration file (config=) they override, and a
// progress callback that gets each train_log.jsonl record as a dict.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "cli/app.h"
#include "cli/config_file.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/option_names.h"
#include "core/threads.h"
#include "io/model_dir.h"
#include "search_kwargs.h"
#include "train/run.h"
#include "train/train_log_file.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

// What train() was asked: the request and the model's choices, set key by key.
struct TrainSettings {
  TrainRequest request;
  ModelChoice model;

  // Sets `key` to `v`; false when no setting has that key.
  bool set(const std::string& key, const nlohmann::json& v) {
    if (const TrainOptionSpec* s = find_option(train_option_specs(), key)) {
      s->set(v, request.options);
      request.given_options.insert(key);
    } else if (const auto* r = find_option(train_request_specs(), key)) {
      r->set(v, request);
    } else if (const auto* m = find_option(model_choice_specs(), key); m && key != "vocab_size") {
      m->set(v, model);
    } else {
      return false;
    }
    return true;
  }
  const OptionInfo* info(const std::string& key) const {
    if (const auto* s = find_option(train_option_specs(), key)) return s;
    if (const auto* r = find_option(train_request_specs(), key)) return r;
    if (key == "vocab_size") return nullptr;
    return find_option(model_choice_specs(), key);
  }
};

// A keyword argument's value as JSON: a path as its text.
nlohmann::json kwarg_json(const py::handle& v) {
  const bool plain = v.is_none() || py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v) ||
                     py::isinstance<py::float_>(v) || py::isinstance<py::str>(v) ||
                     py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v);
  return plain ? json_of(v) : nlohmann::json(py::str(v).cast<std::string>());
}

std::string run_train(const std::optional<py::function>& progress, const py::kwargs& kwargs) {
  // Old spellings fail as on the command line ("train: --out is now --output").
  std::vector<std::string> words{"train"};
  for (const auto& [key, value] : kwargs) words.push_back(flag_of_key(key.cast<std::string>()));
  cli::refuse_renamed_flags(words);

  TrainSettings s;
  std::optional<int> threads;
  bool dump = false;
  std::string config;
  for (const auto& [name, value] : kwargs) {
    const std::string key = name.cast<std::string>();
    if (key == "config") config = py::str(value).cast<std::string>();
  }
  // The file first; keyword arguments override it.
  if (!config.empty()) {
    for (const cli::ConfigValue& c : cli::read_config_file(config)) {
      if (kwargs.contains(c.key)) continue;
      const OptionInfo* info = s.info(c.key);
      if (!info) fail("{}{}: unknown key: train() takes no {}", c.at, c.key, c.key);
      try {
        s.set(c.key, cli::option_value(*info, c.words));
      } catch (const Error& e) {
        fail("{}{}: {}", c.at, c.key, e.what());
      }
    }
  }
  for (const auto& [name, value] : kwargs) {
    const std::string key = name.cast<std::string>();
    if (key == "config") continue;
    if (value.is_none()) continue;  // left out
    if (key == "dump_config") {
      dump = value.cast<bool>();
    } else if (key == "threads") {
      threads = value.cast<int>();
    } else {
      const nlohmann::json v = kwarg_json(value);
      try {
        if (!s.set(key, v)) fail("train() takes no setting {}", key);
      } catch (const Error& e) {
        if (s.info(key)) fail("{} {}", key, e.what());
        throw;
      }
    }
  }
  TrainRequest& r = s.request;
  r.model = s.model.resolve();
  const std::string model_dir = r.resume.empty() ? r.output : r.resume;
  if (dump) {
    const std::optional<std::string> checkpoint =
        r.resume.empty() ? std::nullopt : std::optional(checkpoint_to_resume(r.resume));
    const std::string text = cli::config_text(
        train_configuration(r, s.model, resolved_train_options(r, checkpoint),
                            checkpoint ? io::read_model_config(r.resume) : r.model));
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return model_dir;
  }
  if (threads) set_threads(*threads);
  const py::module_ json = py::module_::import("json");
  if (progress) {
    r.progress = [&](const TrainLog& log) {
      const std::string record = train_log_record(log).dump();
      py::gil_scoped_acquire gil;
      (*progress)(json.attr("loads")(record));  // a Python exception ends training here
    };
  }
  r.on_start = cli::train_yml_writer(r, s.model);
  {
    py::gil_scoped_release release;
    train_model_on_ranks(r, threads.has_value());
  }
  return model_dir;
}

}  // namespace

void register_train(py::module_& m) {
  m.def("train", &run_train, py::arg("progress") = py::none(),
        "Trains a model (transduce train) with the keyword arguments as its settings, under the "
        "keys its flags and configuration files use (valid_metric=[\"bleu\", \"ppl\"]; None "
        "leaves a setting out; config=\"run.yml\" reads a configuration file the other keywords "
        "override; dump_config=True prints the resolved configuration and trains nothing); "
        "returns the model directory.");
}

}  // namespace transduce::python
