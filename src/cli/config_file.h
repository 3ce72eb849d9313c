// Configuration files of a subcommand: a YAML mapping whose keys are the subcommand's long flags
// without the dashes and with '_' for '-' (`batch_tokens: 4000` is --batch-tokens 4000), a list
// for a flag that takes several values, true for a switch. Flags on the command line override the
// file. YAML (yaml-cpp) rather than CLI11's own TOML/INI reader, which in CLI11 2.1 reads no file
// for a subcommand; YAML is also what Marian's --config takes, and JSON is YAML too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "train/run.h"

namespace transduce::cli {

struct ConfigFlags {
  std::string path;   // --config
  bool dump = false;  // --dump-config
};

// Adds --config FILE and --dump-config to `cmd`.
void add_config_flags(CLI::App& cmd, ConfigFlags& into);

// Whether the option is a switch (a flag that takes no value: `subtrees: true` in a file).
inline bool is_switch(const CLI::Option& opt) {
  return opt.get_expected_max() == 0;
}

// Whether a key names a flag of the command line itself (--config, --dump-config, --help), which
// no configuration file sets or lists.
bool reserved_key(const std::string& key);

// One setting of a configuration file: its key, its value as command-line words (one per item of
// a list; "true" or "false" for a boolean), and where it is ("FILE: line N: ").
struct ConfigValue {
  std::string key;
  std::vector<std::string> words;
  std::string at;
};
// The file's settings, in order. Fails with one line naming the file for a file that cannot be
// read or is not a mapping, a key written with '-', and a value of the wrong shape.
std::vector<ConfigValue> read_config_file(const std::string& path);

// Gives the options of `cmd` that the command line left out the values the file at `path` sets,
// checked as the flags' own values are. Fails with one line naming the file and the key for a
// file that cannot be read or is not a mapping, an unknown key, a value of the wrong shape, and a
// value the flag refuses.
void apply_config_file(CLI::App& cmd, const std::string& path);

// A configuration file's text: each key with its value (a number, string, bool or list of them),
// or, with no value, a comment saying the key is not set. The file sets what it lists.
using ConfigEntry = std::pair<std::string, std::optional<nlohmann::json>>;
std::string config_text(const std::vector<ConfigEntry>& entries);

// A training run's TrainRequest::on_start that keeps the run's whole configuration with the model,
// as MODEL_DIR/train.yml (a configuration file that trains the same way again).
std::function<void(const std::string&, const TrainOptions&, const ModelConfig&)> train_yml_writer(
    const TrainRequest& request, const ModelChoice& model);

}  // namespace transduce::cli
