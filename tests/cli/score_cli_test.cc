// `transduce score` as a script would run it: sacreBLEU's numbers and lines for a small file
// pair, and one-line errors for bad input.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/file_text.h"
#include "support/run_command.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::lines_of;

class ScoreCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_score_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    // sacreBLEU's README example (its test_bleu.py expects BLEU 48.530827 with 13a).
    write("hyp.txt", "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n");
    write("ref1.txt", "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n");
    write("ref2.txt",
          "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  CommandResult run(const std::string& args, bool merge_stderr = false) const {
    return testing::run_transduce(args, merge_stderr);
  }

  fs::path dir_;
};

TEST_F(ScoreCommand, PrintsBleuChrfAndSignatures) {
  const CommandResult r = run("score --ref " + path("ref1.txt") + " --ref " + path("ref2.txt") +
                              " < " + path("hyp.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  // 13a tokens: "The dog bit the man ." (6), "It wasn't surprising ." (4), "The man had just
  // bitten him ." (7): 17; closest reference lengths 6 + 5 + 7 = 18, BP = exp(1 - 18/17).
  // Matches: segment 1 all (6/5/4/3 of 6/5/4/3); segment 2 "It" and "." (2/0/0/0 of 4/3/2/1);
  // segment 3 The man had bitten him . (6 of 7), "The man", "man had" (2 of 6), "The man had"
  // (1 of 5), 0 of 4. Precisions 14/17, 7/14, 5/11, 3/8.
  EXPECT_EQ(
      lines[0],
      "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_TRUE(lines[1].starts_with("chrF2 = ")) << lines[1];
  EXPECT_EQ(lines[2],
            "BLEU signature: nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:transduce-1.0");
  EXPECT_EQ(lines[3],
            "chrF2 signature: nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:transduce-1.0");

  // The hypothesis from a file gives the same; so does --ref A B.
  const CommandResult from_file =
      run("score --hyp " + path("hyp.txt") + " --ref " + path("ref1.txt") + " " + path("ref2.txt"));
  ASSERT_EQ(from_file.status, 0) << from_file.out;
  EXPECT_EQ(from_file.out, r.out);
}

TEST_F(ScoreCommand, OptionsChangeScoresAndSignatures) {
  const std::string refs = " --ref " + path("ref1.txt") + " --ref " + path("ref2.txt");
  CommandResult r = run("score --tokenize intl --metrics bleu" + refs + " < " + path("hyp.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  // sacreBLEU's test_bleu.py: 43.91623493 with the intl tokenizer.
  EXPECT_TRUE(r.out.starts_with("BLEU = 43.92 ")) << r.out;
  EXPECT_NE(r.out.find("tok:intl"), std::string::npos);
  EXPECT_EQ(r.out.find("chrF"), std::string::npos);

  r = run("score --tokenize none --lowercase --metrics bleu" + refs + " < " + path("hyp.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("case:lc|eff:no|tok:none"), std::string::npos) << r.out;

  r = run("score --metrics chrf --width 4" + refs + " < " + path("hyp.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(r.out.starts_with("chrF2 = ")) << r.out;
  EXPECT_EQ(lines_of(r.out)[0].size(), std::string("chrF2 = 12.3456").size()) << r.out;
  EXPECT_EQ(r.out.find("BLEU"), std::string::npos);
}

TEST_F(ScoreCommand, SmoothingMethodsAsSacreBleuDefinesThem) {
  // Against "the cat sat on the mat": 4 of 6 unigrams match, 1 of 5 bigrams ("sat on"), none of
  // the 4 trigrams or 3 four-grams; equal lengths, so BP = 1.
  write("cat_ref.txt", "the cat sat on the mat\n");
  write("cat_hyp.txt", "the dog sat on a mat\n");
  const std::string args =
      "score --metrics bleu --json --ref " + path("cat_ref.txt") + " --hyp " + path("cat_hyp.txt");
  auto bleu = [&](const std::string& more) {
    const CommandResult r = run(args + more);
    EXPECT_EQ(r.status, 0) << r.out;
    return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  auto geometric_mean = [](std::vector<double> p) {
    double log_sum = 0;
    for (double x : p) log_sum += std::log(x);
    return 100.0 * std::exp(log_sum / static_cast<double>(p.size()));
  };
  // multi-bleu.perl's: any zero precision makes BLEU 0.
  nlohmann::json j = bleu(" --smooth-method none");
  EXPECT_EQ(j.value("score", -1.0), 0.0);
  EXPECT_NE(j.value("bleu_signature", std::string()).find("|smooth:none|"), std::string::npos);
  // A zero count counts as the floor.
  j = bleu(" --smooth-method floor --smooth-value 0.2");
  EXPECT_NEAR(j.value("score", -1.0), geometric_mean({4.0 / 6, 1.0 / 5, 0.2 / 4, 0.2 / 3}), 1e-9);
  EXPECT_NE(j.value("bleu_signature", std::string()).find("|smooth:floor[0.20]|"),
            std::string::npos);
  // k = 1 added to the matches and totals of orders 2 to 4.
  j = bleu(" --smooth-method add-k");
  EXPECT_NEAR(j.value("score", -1.0), geometric_mean({4.0 / 6, 2.0 / 6, 1.0 / 5, 1.0 / 4}), 1e-9);
  // The default: the k-th zero precision is 1 / (2^k total).
  j = bleu("");
  EXPECT_NEAR(j.value("score", -1.0), geometric_mean({4.0 / 6, 1.0 / 5, 1.0 / 8, 1.0 / 12}), 1e-9);

  const CommandResult bad = run(args + " --smooth-method exp --smooth-value 0.5", true);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("--smooth-value goes with --smooth-method floor or add-k"),
            std::string::npos)
      << bad.out;
}

TEST_F(ScoreCommand, TokenizedOutputIsWarnedAboutOnStderrOnly) {
  std::string tokenized;
  for (int i = 0; i < 120; ++i) tokenized += "a house by the river .\n";
  write("tok.txt", tokenized);
  const std::string args = "score --json --ref " + path("tok.txt") + " --hyp " + path("tok.txt");
  // Standard output stays one JSON object; the warning goes to stderr.
  const CommandResult r = run(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NEAR(nlohmann::json::parse(r.out).at("score").get<double>(), 100.0, 1e-9);
  const CommandResult merged = run(args, true);
  EXPECT_NE(merged.out.find("warning: 120 of 120 hypothesis lines end in a tokenized period"),
            std::string::npos)
      << merged.out;
  // Text scored with --tokenize none is tokenized on purpose: no warning.
  const CommandResult none = run(args + " --tokenize none", true);
  EXPECT_EQ(none.out.find("warning"), std::string::npos) << none.out;
}

TEST_F(ScoreCommand, JsonHasTheNumbersAndSignatures) {
  const CommandResult r = run("score --json --ref " + path("ref1.txt") + " --ref " +
                              path("ref2.txt") + " < " + path("hyp.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j.at("score").get<double>(), 48.530827, 1e-6);
  EXPECT_EQ(j.at("precisions").size(), 4u);
  EXPECT_EQ(j.at("counts").get<std::vector<int>>(), (std::vector<int>{14, 7, 5, 3}));
  EXPECT_EQ(j.at("totals").get<std::vector<int>>(), (std::vector<int>{17, 14, 11, 8}));
  EXPECT_NEAR(j.at("bp").get<double>(), std::exp(1.0 - 18.0 / 17.0), 1e-12);
  EXPECT_NEAR(j.at("ratio").get<double>(), 17.0 / 18.0, 1e-12);
  EXPECT_EQ(j.at("hyp_len").get<int>(), 17);
  EXPECT_EQ(j.at("ref_len").get<int>(), 18);
  EXPECT_GT(j.at("chrf").get<double>(), 0.0);
  EXPECT_EQ(j.at("chrf_name").get<std::string>(), "chrF2");
  EXPECT_TRUE(j.at("bleu_signature").get<std::string>().starts_with("nrefs:2|case:mixed"));
  EXPECT_TRUE(j.at("chrf_signature").get<std::string>().starts_with("nrefs:2|case:mixed"));
}

TEST_F(ScoreCommand, MismatchedLineCountsNameBothFiles) {
  write("short.txt", "The dog bit the man.\nIt was not unexpected.\n");
  const CommandResult r = run("score --ref " + path("short.txt") + " < " + path("hyp.txt"), true);
  EXPECT_NE(r.status, 0);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("stdin has 3 lines"), std::string::npos) << r.out;
  EXPECT_NE(lines[0].find(path("short.txt") + " has 2 lines"), std::string::npos) << r.out;

  const CommandResult f =
      run("score --hyp " + path("hyp.txt") + " --ref " + path("short.txt"), true);
  EXPECT_NE(f.status, 0);
  EXPECT_NE(f.out.find(path("hyp.txt") + " has 3 lines"), std::string::npos) << f.out;
}

TEST_F(ScoreCommand, InvalidUtf8NamesFileAndLine) {
  write("bad.txt", "fine\nbad \xff byte\nfine\n");
  CommandResult r = run("score --ref " + path("bad.txt") + " < " + path("hyp.txt"), true);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find(path("bad.txt") + ":2: invalid UTF-8"), std::string::npos) << r.out;

  r = run("score --ref " + path("ref1.txt") + " < " + path("bad.txt"), true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("stdin:2: invalid UTF-8"), std::string::npos) << r.out;
}

TEST_F(ScoreCommand, EmptyLinesAndBadFlags) {
  // An empty hypothesis line is scored (as nothing); an empty reference line with no other
  // reference is refused, naming the line.
  write("hyp_empty.txt", "The dog bit the man.\n\nThe man had just bitten him.\n");
  CommandResult r = run("score --ref " + path("ref1.txt") + " < " + path("hyp_empty.txt"));
  EXPECT_EQ(r.status, 0) << r.out;
  write("ref_empty.txt", "The dog bit the man.\n   \nThe man bit him first.\n");
  r = run("score --ref " + path("ref_empty.txt") + " < " + path("hyp.txt"), true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find(path("ref_empty.txt") + ":2: empty reference"), std::string::npos) << r.out;
  // ...but with a second reference for that line it is fine, and nrefs becomes "var".
  r = run("score --ref " + path("ref_empty.txt") + " --ref " + path("ref2.txt") + " < " +
          path("hyp.txt"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("nrefs:var"), std::string::npos) << r.out;

  EXPECT_NE(run("score < " + path("hyp.txt"), true).status, 0);  // no --ref
  EXPECT_NE(
      run("score --tokenize zh --ref " + path("ref1.txt") + " < " + path("hyp.txt"), true).status,
      0);
  EXPECT_NE(
      run("score --metrics bleu,ter --ref " + path("ref1.txt") + " < " + path("hyp.txt"), true)
          .status,
      0);
  r = run("score --ref " + path("missing.txt") + " < " + path("hyp.txt"), true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("missing.txt"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace transduce
