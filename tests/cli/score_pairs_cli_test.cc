// `transduce score-pairs`: each line's scores are score_pairs' (tests/decode/forced_score_test.cc
// checks those against the forward pass and beam search) on the tokenized pair; the per-token
// field sums to the log-probability; the score follows --alpha; bad input is one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/forced_score.h"
#include "decode/loaded_model.h"
#include "support/file_text.h"
#include "support/random_model.h"
#include "support/run_command.h"

namespace transduce {
namespace {

using testing::CommandResult;
using testing::expect_one_line_error;
using testing::lines_of;
using testing::run_transduce;

class ScorePairsCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::RandomModelDir("transduce_score_pairs_cli");
    for (const char* side : {"src", "tgt"}) {
      std::ifstream in(work() + "/train." + side);
      std::ofstream out(work() + "/pairs." + side);
      std::string line;
      for (int i = 0; i < 30 && std::getline(in, line); ++i) out << line << "\n";
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string work() { return dir_->path(); }
  static std::string pairs() {
    return "-m " + dir_->model() + " --src " + work() + "/pairs.src --tgt " + work() + "/pairs.tgt";
  }
  static std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
    return out;
  }

  static testing::RandomModelDir* dir_;
};

testing::RandomModelDir* ScorePairsCommand::dir_ = nullptr;

TEST_F(ScorePairsCommand, EachLineIsTheForcedScoreOfItsTokenizedPair) {
  const CommandResult r = run_transduce("score-pairs " + pairs() + " --json", false);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 30u);

  LoadedModel loaded(dir_->model());
  std::vector<std::vector<int32_t>> sources, targets;
  std::ifstream src(work() + "/pairs.src"), tgt(work() + "/pairs.tgt");
  for (std::string s, t; std::getline(src, s) && std::getline(tgt, t);) {
    sources.push_back(loaded.tokenizer().encode(s));
    targets.push_back(loaded.tokenizer().encode(t));
  }
  const std::vector<PairScore> want = score_pairs(loaded.model(), sources, targets, 0.6f);
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const nlohmann::json j = nlohmann::json::parse(lines[i]);
    EXPECT_NEAR(j["log_prob"].get<double>(), want[i].log_prob, 1e-5 * std::abs(want[i].log_prob));
    EXPECT_NEAR(j["score"].get<double>(), want[i].score, 1e-5 * std::abs(want[i].score));
    const auto pieces = j["pieces"].get<std::vector<std::string>>();
    ASSERT_EQ(pieces.size(), targets[i].size() + 1);
    EXPECT_EQ(pieces.back(), loaded.tokenizer().piece(2));  // EOS
    EXPECT_EQ(j["token_log_probs"].size(), pieces.size());
  }
}

TEST_F(ScorePairsCommand, TokensSumToTheLogProbabilityAndAlphaSetsTheScore) {
  const CommandResult r = run_transduce("score-pairs " + pairs() + " --tokens --alpha 1", false);
  ASSERT_EQ(r.status, 0) << r.out;
  for (const std::string& line : lines_of(r.out)) {
    SCOPED_TRACE(line);
    const std::vector<std::string> f = fields(line);
    ASSERT_EQ(f.size(), 3u);
    const double log_prob = std::stod(f[0]), score = std::stod(f[1]);
    std::istringstream each(f[2]);
    double sum = 0;
    int count = 0;
    for (double lp; each >> lp; ++count) sum += lp;
    ASSERT_GT(count, 1);
    EXPECT_NEAR(sum, log_prob, 5e-5 * count + 5e-5);  // each printed to 4 decimals
    // alpha 1: log_prob / ((5 + tokens with EOS) / 6).
    EXPECT_NEAR(score, log_prob / ((5.0 + count) / 6.0), 2e-4);
  }
}

TEST_F(ScorePairsCommand, BadInputIsOneLine) {
  {
    std::ofstream out(work() + "/short.tgt");
    out << "one line\n";
  }
  expect_one_line_error(run_transduce("score-pairs -m " + dir_->model() + " --src " + work() +
                                      "/pairs.src --tgt " + work() + "/short.tgt"),
                        "short.tgt has 1");
  {
    std::ofstream src(work() + "/long.src"), tgt(work() + "/long.tgt");
    src << "a\nb\n";
    tgt << "a\n";
    for (int i = 0; i < 300; ++i) tgt << "word" << i << " ";
    tgt << "\n";
  }
  expect_one_line_error(run_transduce("score-pairs -m " + dir_->model() + " --src " + work() +
                                      "/long.src --tgt " + work() + "/long.tgt"),
                        "long.tgt:2:");
  // A long source is refused too, naming --long-input; a long target is refused even with it.
  expect_one_line_error(run_transduce("score-pairs -m " + dir_->model() + " --src " + work() +
                                      "/long.tgt --tgt " + work() + "/long.src"),
                        "long.tgt:2:");
  expect_one_line_error(
      run_transduce("score-pairs -m " + dir_->model() + " --long-input truncate --src " + work() +
                    "/long.src --tgt " + work() + "/long.tgt"),
      "a target is never cut");
}

// --max-input-len with --long-input truncate scores a source's first pieces: two sources sharing
// them score the same against one target, where whole they do not; refused without it.
TEST_F(ScorePairsCommand, LongSourcesAreRefusedOrCut) {
  {
    std::ofstream src(work() + "/two.src"), tgt(work() + "/two.tgt");
    src << "the cat sat on a mat\nthe cat sat under the red tree\n";
    tgt << "a dog\na dog\n";
  }
  const std::string base = "score-pairs -m " + dir_->model() + " --src " + work() +
                           "/two.src --tgt " + work() + "/two.tgt ";
  const CommandResult whole = run_transduce(base, false);
  ASSERT_EQ(whole.status, 0) << whole.out;
  const std::vector<std::string> w = lines_of(whole.out);
  ASSERT_EQ(w.size(), 2u) << whole.out;
  EXPECT_NE(w[0], w[1]);
  const CommandResult cut = run_transduce(base + "--max-input-len 2 --long-input truncate");
  ASSERT_EQ(cut.status, 0) << cut.out;
  EXPECT_NE(cut.out.find("transduce: warning: " + work() + "/two.src:1: "), std::string::npos)
      << cut.out;
  EXPECT_NE(cut.out.find("subword pieces, cut to the first 2"), std::string::npos) << cut.out;
  const CommandResult scores =
      run_transduce(base + "--max-input-len 2 --long-input truncate", false);
  const std::vector<std::string> c = lines_of(scores.out);
  ASSERT_EQ(c.size(), 2u) << scores.out;
  EXPECT_EQ(c[0], c[1]);
  expect_one_line_error(run_transduce(base + "--max-input-len 2"), "two.src:1: ");
}

}  // namespace
}  // namespace transduce
