// transduce.train(**options): `transduce train` itself, its options given as keyword arguments
// (valid_metric=["bleu", "ppl"] is --valid-metric bleu ppl), with a progress callback that gets
// each train_log.jsonl record as a dict.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/option_names.h"
#include "train/train_log_file.h"
#include "train/trainer.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

// A keyword argument as command-line words: None and False leave the option out, True is a flag,
// a list or tuple gives one word per item.
void append_option(std::vector<std::string>& args, const std::string& key, const py::handle& v) {
  const std::string name = flag_of_key(key);
  if (v.is_none() || (py::isinstance<py::bool_>(v) && !v.cast<bool>())) return;
  args.push_back(name);
  if (py::isinstance<py::bool_>(v)) return;
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    for (const py::handle& item : v) args.push_back(py::str(item).cast<std::string>());
    return;
  }
  args.push_back(py::str(v).cast<std::string>());
}

}  // namespace

void register_train(py::module_& m) {
  m.def(
      "train",
      [](const std::optional<py::function>& progress, const py::kwargs& options) {
        std::vector<std::string> args{"train"};
        for (const auto& [key, value] : options)
          append_option(args, key.cast<std::string>(), value);
        std::function<void(const TrainLog&)> report;
        const py::module_ json = py::module_::import("json");
        if (progress) {
          report = [&](const TrainLog& log) {
            const std::string record = train_log_record(log).dump();
            py::gil_scoped_acquire gil;
            (*progress)(json.attr("loads")(record));  // a Python exception ends training here
          };
        }
        CLI::App app{"transduce"};
        cli::add_global_options(app);
        app.require_subcommand(1);
        cli::register_train(app, report);
        cli::refuse_renamed_flags(args);
        std::reverse(args.begin(), args.end());  // CLI11 takes the words last first
        {
          py::gil_scoped_release release;
          try {
            app.parse(args);
          } catch (const CLI::ParseError& e) {
            fail("train: {}", e.what());
          }
        }
        std::string model_dir;
        for (const char* key : {"output", "resume"})
          if (options.contains(key)) model_dir = py::str(options[key]).cast<std::string>();
        return model_dir;
      },
      py::arg("progress") = py::none(),
      "Runs `transduce train` with the keyword arguments as its options; returns the model "
      "directory.");
}

}  // namespace transduce::python
