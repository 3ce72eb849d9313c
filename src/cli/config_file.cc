#include "cli/config_file.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/option_names.h"
#include "io/atomic_file.h"
#include "io/model_dir.h"

namespace transduce::cli {

namespace {

// "FILE: line N: " for a node of the file.
std::string where(const std::string& path, const YAML::Node& node) {
  return fmt::format("{}: line {}: ", path, node.Mark().line + 1);
}

// The words a value stands for on the command line.
std::vector<std::string> value_words(const std::string& at, const std::string& key,
                                     const YAML::Node& value) {
  if (value.IsScalar()) return {value.Scalar()};
  if (value.IsSequence()) {
    std::vector<std::string> words;
    for (const YAML::Node& item : value) {
      if (!item.IsScalar())
        fail("{}{}: a list of single values was expected, not of {}", at, key,
             item.IsMap() ? "mappings" : "lists");
      words.push_back(item.Scalar());
    }
    if (words.empty()) fail("{}{}: an empty list sets nothing: leave the key out", at, key);
    return words;
  }
  if (value.IsMap()) fail("{}{}: a value was expected, not a mapping", at, key);
  fail("{}{}: the key has no value", at, key);
}

// Numbers and booleans as they are, strings quoted (so that "null", "true" or "" read back as the
// strings they are).
void emit_scalar(YAML::Emitter& out, const nlohmann::json& v) {
  if (v.is_string())
    out << YAML::DoubleQuoted << v.get<std::string>();
  else
    out << v.dump();
}

}  // namespace

bool reserved_key(const std::string& key) {
  return key == "help" || key == "config" || key == "dump_config";
}

void add_config_flags(CLI::App& cmd, ConfigFlags& into) {
  cmd.add_option("--config", into.path,
                 "read options from this YAML file (keys: the flags without '--', '_' for '-'); "
                 "flags on the command line override it");
  cmd.add_flag("--dump-config", into.dump,
               "print the resolved configuration as YAML (a --config file) and exit");
}

std::vector<ConfigValue> read_config_file(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    fail("{}: cannot read the configuration file", path);
  } catch (const YAML::ParserException& e) {
    fail("{}: line {}: not YAML: {}", path, e.mark.line + 1, e.msg);
  }
  if (root.IsNull()) return {};  // an empty file sets nothing
  if (!root.IsMap())
    fail("{}: a configuration file is a mapping of keys to values (`batch_tokens: 4000`)", path);
  std::vector<ConfigValue> values;
  for (const auto& item : root) {
    const std::string at = where(path, item.first);
    if (!item.first.IsScalar()) fail("{}a key must be a name", at);
    const std::string key = item.first.Scalar();
    if (key.find('-') != std::string::npos) {
      std::string underscored = key;
      std::replace(underscored.begin(), underscored.end(), '-', '_');
      fail("{}{}: keys write '_' for the flags' '-': {}", at, key, underscored);
    }
    values.push_back({key, value_words(at, key, item.second), at});
  }
  return values;
}

void apply_config_file(CLI::App& cmd, const std::string& path) {
  for (ConfigValue& value : read_config_file(path)) {
    const std::string& at = value.at;
    const std::string& key = value.key;
    std::vector<std::string>& words = value.words;
    const std::string flag = flag_of_key(key);
    CLI::Option* opt = reserved_key(key) ? nullptr : cmd.get_option_no_throw(flag);
    if (opt == nullptr)
      fail("{}{}: unknown key: `transduce {}` has no {}", at, key, cmd.get_name(), flag);
    if (opt->count() > 0) continue;  // the command line gave it
    if (is_switch(*opt)) {
      // A switch: true sets it, false leaves it off.
      if (words.size() != 1 || (words[0] != "true" && words[0] != "false"))
        fail("{}{}: true or false was expected, got {}", at, key, fmt::join(words, " "));
      if (words[0] == "false") continue;
    } else if (opt->get_expected_max() == 1 && words.size() > 1) {
      fail("{}{}: one value was expected, got a list of {}", at, key, words.size());
    }
    try {
      opt->add_result(std::move(words));
      opt->run_callback();
    } catch (const CLI::Error& e) {
      fail("{}{}: {}", at, key, e.what());
    } catch (const Error& e) {
      fail("{}{}: {}", at, key, e.what());
    }
  }
}

std::string config_text(const std::vector<ConfigEntry>& entries) {
  std::string text;
  for (const auto& [key, value] : entries) {
    if (!value) {
      text += fmt::format("# {}: (not set)\n", key);
      continue;
    }
    YAML::Emitter line;
    line << YAML::BeginMap << YAML::Key << key << YAML::Value;
    if (value->is_array()) {
      line << YAML::Flow << YAML::BeginSeq;
      for (const nlohmann::json& v : *value) emit_scalar(line, v);
      line << YAML::EndSeq;
    } else {
      emit_scalar(line, *value);
    }
    line << YAML::EndMap;
    text += line.c_str();
    text += "\n";
  }
  return text;
}

std::function<void(const std::string&, const TrainOptions&, const ModelConfig&)> train_yml_writer(
    const TrainRequest& request, const ModelChoice& model) {
  return [request, model](const std::string& model_dir, const TrainOptions& options,
                          const ModelConfig& config) {
    io::write_file_atomically(io::model_file(model_dir, "train.yml"),
                              config_text(train_configuration(request, model, options, config)));
  };
}

}  // namespace transduce::cli
