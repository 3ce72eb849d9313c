#include "train/train_log_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace transduce {
namespace {

namespace fs = std::filesystem;

class TrainLogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_train_log_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = (fs::path(dir_) / "train_log.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<nlohmann::json> records() const {
    std::ifstream in(path_);
    std::vector<nlohmann::json> out;
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  static TrainLog train_line(int64_t step) {
    TrainLog l;
    l.step = step;
    l.epoch = 1 + step / 10;
    l.loss = 10.0 / static_cast<double>(step);
    l.perplexity = 2.5;
    l.learning_rate = 1e-4 * static_cast<double>(step);
    l.tokens_per_second = 1234.5;
    l.target_tokens = 77;
    l.elapsed_seconds = 0.5 * static_cast<double>(step);
    return l;
  }

  std::string dir_, path_;
};

TEST_F(TrainLogFileTest, OneRecordPerLineWithEveryField) {
  {
    TrainLogFile log(path_, -1);
    log.write(train_line(5));
    TrainLog v;
    v.validation = true;
    v.step = 5;
    v.epoch = 1;
    v.loss = 3.25;
    v.perplexity = 20.0;
    v.elapsed_seconds = 2.75;
    log.write(v);
  }
  const std::vector<nlohmann::json> r = records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["kind"], "train");
  EXPECT_EQ(r[0]["step"], 5);
  EXPECT_EQ(r[0]["epoch"], 1);
  EXPECT_DOUBLE_EQ(r[0]["loss"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r[0]["ppl"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(r[0]["lr"].get<double>(), 5e-4);
  EXPECT_DOUBLE_EQ(r[0]["tokens_per_second"].get<double>(), 1234.5);
  EXPECT_EQ(r[0]["target_tokens"], 77);
  EXPECT_DOUBLE_EQ(r[0]["elapsed_seconds"].get<double>(), 2.5);
  EXPECT_EQ(r[1]["kind"], "valid");
  EXPECT_DOUBLE_EQ(r[1]["loss"].get<double>(), 3.25);
  EXPECT_DOUBLE_EQ(r[1]["ppl"].get<double>(), 20.0);
  EXPECT_FALSE(r[1].contains("lr"));
}

TEST_F(TrainLogFileTest, ANewModelStartsAnEmptyLog) {
  { TrainLogFile(path_, -1).write(train_line(1)); }
  { TrainLogFile(path_, -1).write(train_line(2)); }
  const std::vector<nlohmann::json> r = records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]["step"], 2);
}

TEST_F(TrainLogFileTest, ResumingDropsStepsAfterTheCheckpointAndACutLine) {
  {
    TrainLogFile log(path_, -1);
    for (int64_t step : {10, 20, 30, 40}) log.write(train_line(step));
  }
  {
    // A crash in the middle of a line.
    std::ofstream out(path_, std::ios::app);
    out << R"({"kind":"train","st)";
  }
  {
    TrainLogFile log(path_, 20);
    log.write(train_line(30));
  }
  std::vector<nlohmann::json> r = records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0]["step"], 10);
  EXPECT_EQ(r[1]["step"], 20);
  EXPECT_EQ(r[2]["step"], 30);

  // The cut line alone (every record before the checkpoint) is dropped too.
  {
    std::ofstream out(path_, std::ios::app);
    out << "{\"kind\"";
  }
  { TrainLogFile log(path_, 100); }
  r = records();
  EXPECT_EQ(r.size(), 3u);
}

// A run killed while it rewrote the log (io/atomic_file.h) leaves PATH.tmp.PID.N; the next run
// removes it, and nothing else.
TEST_F(TrainLogFileTest, ARunRemovesTheTemporaryFilesOfAKilledRewrite) {
  { TrainLogFile(path_, -1).write(train_line(1)); }
  const std::string leftover = path_ + ".tmp.4242.0", other = path_ + ".bak";
  for (const std::string& p : {leftover, other}) std::ofstream(p) << "partial";
  { TrainLogFile log(path_, 1); }
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_EQ(records().size(), 1u);
}

}  // namespace
}  // namespace transduce
