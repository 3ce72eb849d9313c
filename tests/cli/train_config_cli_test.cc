// `transduce train --config FILE` and `--dump-config`, and every training option of the one
// declaration (train/train_options.h) carried from the command line and from a configuration file
// into the checkpoint's saved options and back out of a resumed run.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/shortest_float.h"
#include "support/file_text.h"
#include "support/run_command.h"
#include "support/toy_corpus.h"
#include "train/train_options.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::run_transduce;
using Kind = TrainOptionSpec::Kind;

// A value of the option other than its default and within its range, chosen from the declaration
// alone, so that an option added to the list is tested here without an edit.
nlohmann::json changed_value(const TrainOptionSpec& spec, const std::string& dir) {
  const nlohmann::json def = spec.get(TrainOptions{});
  switch (spec.kind) {
    case Kind::kInteger: {
      const int64_t v = def.get<int64_t>() + 1;
      EXPECT_FALSE(spec.range_problem(static_cast<double>(v))) << spec.key;
      return v;
    }
    case Kind::kReal: {
      double v = def.get<double>() + 0.25;
      if (spec.range_problem(v)) v = (def.get<double>() + *spec.max) / 2;
      EXPECT_FALSE(spec.range_problem(v)) << spec.key;
      return shortest_float(static_cast<float>(v));  // as a float option holds it
    }
    case Kind::kChoice: {
      const auto it = std::find(spec.choices.begin(), spec.choices.end(), def.get<std::string>());
      return spec.choices[static_cast<size_t>(it - spec.choices.begin() + 1) % spec.choices.size()];
    }
    case Kind::kChoices:
      return nlohmann::json(std::vector<std::string>(spec.choices.rbegin(), spec.choices.rend()));
    case Kind::kText:
      return dir + "/" + spec.key + "-{step}.txt";
    case Kind::kSwitch:
      return !def.get<bool>();
  }
  return nullptr;
}

// The words of a value on the command line (or in a YAML scalar or list).
std::vector<std::string> words(const nlohmann::json& v) {
  if (v.is_array()) {
    std::vector<std::string> out;
    for (const nlohmann::json& x : v) out.push_back(x.get<std::string>());
    return out;
  }
  return {v.is_string() ? v.get<std::string>() : v.dump()};
}

// The value a YAML node holds, as words.
std::vector<std::string> words(const YAML::Node& node) {
  if (node.IsSequence()) return node.as<std::vector<std::string>>();
  return {node.as<std::string>()};
}

class TrainConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_toy_corpus(dir_, 120);
    const std::string failed = testing::make_toy_vocab(dir_);
    ASSERT_TRUE(failed.empty()) << failed;
  }

  std::string data_flags() const {
    return "--src " + dir_ + "/train.src --tgt " + dir_ + "/train.tgt --valid-src " + dir_ +
           "/train.src --valid-tgt " + dir_ + "/train.tgt --vocab " + dir_ + "/vocab";
  }
  static constexpr const char* kModelFlags = "--layers 1 --d-model 16 --d-ff 32 --heads 2";

  // YAML text of the dump, checked to parse.
  static YAML::Node dump_of(const CommandResult& r) {
    EXPECT_EQ(r.status, 0) << r.out;
    return YAML::Load(r.out);
  }

  testing::TempDir tmp_{"transduce_train_config"};
  const std::string dir_ = tmp_.path();
};

// Every option set to a value other than its default, by flags in one run and by a configuration
// file in another: the runs save those values with their checkpoints, come out bitwise equal, and
// a resumed run (with no option given again) reports them in its resolved configuration.
TEST_F(TrainConfig, EveryOptionGoesFromFlagsAndFilesIntoTheCheckpointAndBack) {
  std::string flags;
  std::string file = "layers: 1\nd_model: 16\nd_ff: 32\nheads: 2\n";
  for (const char* key : {"src", "tgt", "valid_src", "valid_tgt"})
    file += fmt::format("{}: {}/train.{}\n", key, dir_,
                        std::string(key).ends_with("src") ? "src" : "tgt");
  file += "vocab: " + dir_ + "/vocab\n";
  std::vector<std::pair<const TrainOptionSpec*, nlohmann::json>> changed;
  for (const TrainOptionSpec& spec : train_option_specs()) {
    const nlohmann::json v = changed_value(spec, dir_);
    ASSERT_NE(v, spec.get(TrainOptions{})) << spec.key;
    changed.emplace_back(&spec, v);
    if (spec.kind == Kind::kSwitch) {  // a switch's flag takes no value
      if (v.get<bool>()) flags += fmt::format(" {}", spec.flag());
      file += fmt::format("{}: {}\n", spec.key, v.dump());
      continue;
    }
    flags += fmt::format(" {}", spec.flag());
    for (const std::string& w : words(v)) flags += fmt::format(" '{}'", w);
    file += v.is_array() ? fmt::format("{}: [{}]\n", spec.key, fmt::join(words(v), ", "))
                         : fmt::format("{}: '{}'\n", spec.key, words(v).front());
  }
  const std::string by_flags = dir_ + "/by-flags", by_file = dir_ + "/by-file";
  CommandResult r = run_transduce("--threads 1 train " + data_flags() + " " + kModelFlags +
                                  " --output " + by_flags + flags);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ofstream(dir_ + "/run.yml") << file;
  r = run_transduce("--threads 1 train --config " + dir_ + "/run.yml --output " + by_file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(testing::read_file(by_flags + "/model.safetensors"),
            testing::read_file(by_file + "/model.safetensors"));

  // Saved: the newest checkpoint's state.json holds each value.
  std::vector<fs::path> checkpoints;
  for (const auto& e : fs::directory_iterator(by_flags + "/checkpoints"))
    checkpoints.push_back(e.path());
  ASSERT_FALSE(checkpoints.empty());
  const nlohmann::json saved =
      nlohmann::json::parse(
          testing::read_file(
              (*std::max_element(checkpoints.begin(), checkpoints.end()) / "state.json").string()))
          .at("options");
  // Loaded back: a resumed run's resolved configuration, no option given again.
  const YAML::Node resumed =
      dump_of(run_transduce("train --resume " + by_flags + " " + data_flags() + " --dump-config"));
  // Kept: the model directory's train.yml, itself a configuration file.
  const YAML::Node kept = YAML::LoadFile(by_file + "/train.yml");
  for (const auto& [spec, v] : changed) {
    EXPECT_EQ(saved.at(spec->key), v) << spec->key;
    ASSERT_TRUE(resumed[spec->key]) << spec->key << " missing from\n" << r.out;
    EXPECT_EQ(words(resumed[spec->key]), words(v)) << spec->key;
    EXPECT_EQ(words(kept[spec->key]), words(v)) << spec->key;
  }
}

// --dump-config's output is a configuration file that resolves to itself; flags override the
// file, and the file overrides the defaults.
TEST_F(TrainConfig, FlagsOverrideTheFileAndTheDumpReadsBack) {
  std::ofstream(dir_ + "/a.yml") << "lr_scale: 2\nbatch_tokens: 300\nvalid_metric: [bleu, ppl]\n"
                                    "subtrees: true\n";
  const CommandResult first =
      run_transduce("train --config " + dir_ + "/a.yml --lr-scale 3 --dump-config");
  const YAML::Node dump = dump_of(first);
  EXPECT_EQ(dump["lr_scale"].as<double>(), 3.0);
  EXPECT_EQ(dump["batch_tokens"].as<int>(), 300);
  EXPECT_EQ(words(dump["valid_metric"]), (std::vector<std::string>{"bleu", "ppl"}));
  EXPECT_EQ(dump["subtrees"].as<bool>(), true);
  EXPECT_EQ(dump["warmup"].as<int>(), TrainOptions{}.warmup);  // untouched: the default
  std::ofstream(dir_ + "/dump.yml") << first.out;
  const CommandResult again = run_transduce("train --config " + dir_ + "/dump.yml --dump-config");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(again.out, first.out);
}

// Each kind of bad file is refused in one line naming the file, the line, the key and what was
// expected.
TEST_F(TrainConfig, BadFilesAreRefusedInOneLine) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"bogus: 1\n", "line 1: bogus: unknown key: `transduce train` has no --bogus"},
      {"warmup: 9\nbatch-tokens: 5\n", "line 2: batch-tokens: keys write '_' for the flags' '-'"},
      {"batch_tokens: abc\n", "batch_tokens: --batch-tokens: an integer was expected, got abc"},
      {"max_steps: 1.5\n", "max_steps: --max-steps: an integer was expected, got 1.5"},
      {"batch_tokens: 0\n", "batch_tokens: --batch-tokens must be at least 1, got 0"},
      {"ema_decay: 1\n", "ema_decay: --ema-decay must be at least 0 and below 1, got 1"},
      {"lr_schedule: noam\n",
       "lr_schedule: --lr-schedule must be \"inverse-sqrt\", \"linear\" or \"cosine\", got "
       "\"noam\""},
      {"valid_metric: [bleu, bad]\n",
       "valid_metric: --valid-metric must be a list of \"ppl\", \"bleu\" and \"chrf\", got "
       "[\"bleu\",\"bad\"]"},
      {"batch_tokens: [1, 2]\n", "batch_tokens: one value was expected, got a list of 2"},
      {"subtrees: 3\n", "subtrees: true or false was expected, got 3"},
      {"src: {a: 1}\n", "src: a value was expected, not a mapping"},
      {"batch_tokens:\n", "batch_tokens: the key has no value"},
      {"config: other.yml\n", "config: unknown key"},
      {"- batch_tokens\n", "a configuration file is a mapping of keys to values"},
      {"a: [\n", "not YAML"},
      // Found by fuzz/config_file_fuzz.cc: a key of dashes alone threw std::out_of_range; bytes
      // that are not UTF-8 threw nlohmann's type_error out of the message that quotes them.
      {"-: 1\n", "line 1: -: keys write '_' for the flags' '-': _"},
      {"valid_metric: [b\xff]\n", "valid_metric: --valid-metric must be a list of"},
      {"valid_output: \"v\xff\"\n", "valid_output: --valid-output must be UTF-8 text"},
  };
  for (const auto& c : cases) {
    const std::string path = dir_ + "/bad.yml";
    std::ofstream(path) << c.text;
    const CommandResult r =
        run_transduce("train --config " + path + " --output " + dir_ + "/m --dump-config");
    testing::expect_one_line_error(r, path + ": ");
    testing::expect_one_line_error(r, c.says);
    EXPECT_FALSE(fs::exists(dir_ + "/m")) << c.text;
  }
  testing::expect_one_line_error(run_transduce("train --config " + dir_ + "/none.yml"),
                                 dir_ + "/none.yml: cannot read the configuration file");
}

}  // namespace
}  // namespace transduce
