// `transduce average` as a script would run it: the mean of the last k checkpoints, written as a
// model directory of its own.
#include <gtest/gtest.h>

#include "support/run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"
#include "support/random_model.h"
#include "train/checkpoint.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;

CommandResult run(const std::string& args, bool merge_stderr = false) {
  return testing::run_transduce(args, merge_stderr);
}

using testing::tiny_config;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class CheckpointAverageCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("transduce_average_cli_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    model_ = dir_ / "model";
    io::write_model_config(model_.string(), tiny_config());
    std::ofstream(model_ / "spm.model", std::ios::binary) << "not really a sentencepiece model";
    for (int step = 1; step <= 3; ++step) {
      models_.push_back(std::make_unique<Transformer>(tiny_config()));
      models_.back()->init_parameters(static_cast<uint64_t>(step));
      Adam adam(models_.back()->parameters());
      save_checkpoint(model_.string(), *models_.back(), adam, step, nlohmann::json::object(), 0);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Checks that `out`/model.safetensors is the mean of the models saved at the given steps.
  void expect_mean_of(const fs::path& out, std::vector<int> steps) {
    const std::string path = (out / "model.safetensors").string();
    io::SafetensorsFile f = io::load_safetensors(path);
    Transformer m(io::config_from_metadata(f, path));
    io::load_weights(m, f, path);
    for (size_t i = 0; i < m.parameters().size(); ++i) {
      const Param* p = m.parameters()[i];
      for (int64_t k = 0; k < p->value.numel(); ++k) {
        double sum = 0;
        for (int s : steps)
          sum += models_[static_cast<size_t>(s - 1)]->parameters()[i]->value.f32()[k];
        ASSERT_EQ(p->value.f32()[k], static_cast<float>(sum / static_cast<double>(steps.size())))
            << p->name << "[" << k << "]";
      }
    }
  }

  fs::path dir_, model_;
  std::vector<std::unique_ptr<Transformer>> models_;
};

TEST_F(CheckpointAverageCommand, LastTwoMakesAModelDirectory) {
  const fs::path out = dir_ / "averaged";
  CommandResult r =
      run(fmt::format("average --last 2 -m {} --output {}", model_.string(), out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("step-00000001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step-00000002"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step-00000003"), std::string::npos) << r.out;
  expect_mean_of(out, {2, 3});
  EXPECT_EQ(read_bytes(out / "config.json"), read_bytes(model_ / "config.json"));
  EXPECT_EQ(read_bytes(out / "spm.model"), read_bytes(model_ / "spm.model"));
  EXPECT_EQ(nlohmann::json(io::read_model_config(out.string())), nlohmann::json(tiny_config()));
}

TEST_F(CheckpointAverageCommand, FewerThanAskedWarnsAndUsesAll) {
  const fs::path out = dir_ / "averaged";
  CommandResult r =
      run(fmt::format("average --last 5 -m {} --output {}", model_.string(), out.string()), true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning"), std::string::npos) << r.out;
  expect_mean_of(out, {1, 2, 3});
}

TEST_F(CheckpointAverageCommand, NamedCheckpoints) {
  const fs::path out = dir_ / "named";
  const fs::path ckpts = model_ / "checkpoints";
  CommandResult r =
      run(fmt::format("average --checkpoints {} {} --output {}", (ckpts / "step-00000001").string(),
                      (ckpts / "step-00000003").string(), out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  expect_mean_of(out, {1, 3});
  // The config and vocabulary come from the model dir that holds the checkpoints.
  EXPECT_EQ(read_bytes(out / "config.json"), read_bytes(model_ / "config.json"));
  EXPECT_EQ(read_bytes(out / "spm.model"), read_bytes(model_ / "spm.model"));
}

TEST_F(CheckpointAverageCommand, ErrorsGetOneLineAndAFailingExit) {
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  CommandResult r =
      run(fmt::format("average --last 2 -m {} --output {}", empty.string(), (dir_ / "o").string()),
          true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("no complete checkpoints"), std::string::npos) << r.out;

  r = run(fmt::format("average --last 2 -m {} --output {}", model_.string(), model_.string()),
          true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--output"), std::string::npos) << r.out;

  // Checkpoints of different models.
  ModelConfig wider = tiny_config();
  wider.d_ff = 16;
  Transformer w(wider);
  w.init_parameters(4);
  Adam adam(w.parameters());
  const fs::path other = dir_ / "other";
  save_checkpoint(other.string(), w, adam, 1, nlohmann::json::object(), 0);
  r = run(fmt::format("average --checkpoints {} {} --output {}",
                      (model_ / "checkpoints" / "step-00000001").string(),
                      (other / "checkpoints" / "step-00000001").string(), (dir_ / "o").string()),
          true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("config"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace
}  // namespace transduce
