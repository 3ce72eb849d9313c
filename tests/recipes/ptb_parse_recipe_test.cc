// recipes/ptb-parse/run end to end in its tiny setting on the Penn Treebank sample: every stage
// must leave its output, the parser directory must decode with the settings chosen on dev, and the
// report must agree with the parses it names. Nothing is asserted about parsing quality
// (docs/recipes/ptb.md measures that with the full recipe).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/file_text.h"
#include "support/run_command.h"
#include "support/shared_data.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::lines_of;
using testing::read_file;
using testing::run_shell;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class PtbParseRecipe : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_ptb_recipe_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string treebanks() {
    std::string flags;
    for (const char* split : {"train", "dev", "test"})
      flags += std::string(" --") + split + " " +
               testing::shared_data_file(std::string("ptb-sample/") + split + ".trees");
    return flags;
  }
  std::string command(const std::string& extra) const {
    return "python3 " + std::string(TRANSDUCE_SOURCE_DIR) + "/recipes/ptb-parse/run --tiny " +
           "--threads 1 --transduce " + TRANSDUCE_BINARY + " " + extra;
  }
  std::string tx(const std::string& args) const {
    return std::string(TRANSDUCE_BINARY) + " " + args;
  }

  fs::path dir_;
};

TEST_F(PtbParseRecipe, TinySettingRunsEveryStageAndWritesAReport) {
  const fs::path out = dir_ / "run";
  const CommandResult r = run_shell(command(treebanks() + " --output " + out.string()), false);
  ASSERT_EQ(r.status, 0) << r.out;
  // The last line: the test F1 and the dev F1.
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  std::smatch m;
  ASSERT_TRUE(
      std::regex_match(lines.back(), m, std::regex(R"(test F1 = (\d+\.\d\d) \(dev (\d+\.\d\d)\))")))
      << lines.back();

  // The tiny profile's subsets, one tree a line, and the words the parser was given.
  EXPECT_EQ(lines_of(read_file(out / "data/train.trees")).size(), 200u);
  EXPECT_EQ(lines_of(read_file(out / "data/test.trees")).size(), 20u);
  const CommandResult words =
      run_shell(tx("trees --words --input " + (out / "data/test.trees").string()), false);
  EXPECT_EQ(words.out, read_file(out / "data/test.words"));

  const nlohmann::json results = read_json(out / "results.json");
  EXPECT_EQ(results["profile"], "tiny");
  // The report's test F1 is what evalb says of the parses it names.
  const nlohmann::json test_score = nlohmann::json::parse(
      run_shell(tx("evalb --json --max-errors -1 --gold " + (out / "data/test.trees").string() +
                   " --hyp " + (out / "test.parsed.trees").string()),
                false)
          .out);
  EXPECT_DOUBLE_EQ(results["test"]["f1"].get<double>(), test_score["f1"].get<double>());
  // The parser writes its own tags (the tagged scheme), scored as EVALB scores them.
  EXPECT_EQ(results["scheme"], "tagged");
  EXPECT_DOUBLE_EQ(results["test"]["tagging_accuracy"].get<double>(),
                   test_score["tagging_accuracy"].get<double>());
  EXPECT_EQ(results["test"]["errors"], test_score["errors"]);
  EXPECT_EQ(read_file(out / "test.parsed.trees").find("(XX "), std::string::npos);
  EXPECT_EQ(m[1].str(), fmt::format("{:.2f}", test_score["f1"].get<double>()));
  EXPECT_EQ(results["test"]["sentences"], 20);
  EXPECT_EQ(results["test"]["repaired_sentences"], 0);  // constrained decoding
  // One curve point per checkpoint the 20 steps left (every 5 steps, and the end).
  EXPECT_EQ(results["curve"]["points"].size(), 4u) << results["curve"].dump();
  // The decoding grid: both weights at the first setting, then the rest of beams x alphas, then
  // the bracket bonus at the best of those.
  EXPECT_EQ(results["decoding"]["grid"].size(), 4u);
  EXPECT_EQ(results["decoding"]["grid"][3]["bracket_bonus"], 0.5);
  EXPECT_TRUE(results["training"]["subtrees"].get<bool>());
  EXPECT_EQ(results["training"]["word_swaps"], 1);
  EXPECT_NE(r.out.find("training trees: 1 copy added with words of the open-class tags ("),
            std::string::npos)
      << r.out;

  // The parser decodes with the settings chosen on dev without being told them.
  const nlohmann::json chosen = results["decoding"]["chosen"];
  const nlohmann::json settings = read_json(out / "parser/parse.json");
  EXPECT_EQ(settings["decoding"]["beam"], chosen["beam"]);
  EXPECT_EQ(settings["decoding"]["alpha"], chosen["alpha"]);
  EXPECT_EQ(settings["decoding"]["bracket_bonus"], chosen["bracket_bonus"]);
  const CommandResult again = run_shell(tx("parse -m " + (out / "parser").string() + " --input " +
                                           (out / "data/test.words").string()),
                                        false);
  ASSERT_EQ(again.status, 0);
  EXPECT_EQ(again.out, read_file(out / "test.parsed.trees"));

  const std::string md = read_file(out / "results.md");
  EXPECT_NE(md.find("| test | " + m[1].str()), std::string::npos) << md;
  const std::string svg = read_file(out / "training.svg");
  EXPECT_NE(svg.find("dev F1 (checkpoints, beam 1)"), std::string::npos);
  EXPECT_NE(svg.find("validation perplexity"), std::string::npos);

  // --decode-only redoes the decoding on the same model, and its report states what the model
  // trained with whatever training flags it is given.
  const CommandResult redo = run_shell(
      command("--decode-only --scheme xx --word-swaps 0 --minutes 3 --output " + out.string()),
      false);
  ASSERT_EQ(redo.status, 0) << redo.out;
  EXPECT_EQ(lines_of(redo.out).back(), lines.back());
  const nlohmann::json redone = read_json(out / "results.json");
  EXPECT_TRUE(redone["decode_only"].get<bool>());
  EXPECT_EQ(redone["scheme"], "tagged");
  EXPECT_EQ(redone["training"]["word_swaps"], 1);
  EXPECT_EQ(redone["training"]["steps_limit"], 20);
  EXPECT_TRUE(redone["training"]["minutes_limit"].is_null());
  for (const char* key : {"batch_tokens", "warmup", "lr_scale", "lr_schedule", "subtrees"})
    EXPECT_EQ(redone["training"][key], results["training"][key]) << key;
}

#if TRANSDUCE_WITH_MPI
// --threads is the whole run's: on 2 ranks each trains with its half. --batch-parts divides an
// update among the ranks: 4 parts on 2 ranks are 2 accumulated batches each, of a quarter of the
// update's tokens.
TEST_F(PtbParseRecipe, TrainsOnTwoRanksWithTheirShareOfTheThreadsAndOfTheUpdate) {
  ASSERT_EQ(run_shell("command -v mpirun").status, 0) << "no mpirun: install openmpi-bin";
  const fs::path out = dir_ / "run";
  // Leak checking off for the MPI processes in the sanitizer build (Open MPI's plugins leak).
  const CommandResult r = run_shell(
      "env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 " +
          command(treebanks() + " --threads 2 --ranks 2 --batch-parts 4 --output " + out.string()),
      false);
  ASSERT_EQ(r.status, 0) << r.out;
  // Each rank with 1 of the 2 threads (with --threads 2 meaning each rank's, "2 threads each").
  EXPECT_NE(r.out.find("batches of 500 tokens x 2 accumulated x 2 ranks (1 thread each)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_json(out / "training.json")["batch_parts"], 4);
  const std::string md = read_file(out / "results.md");
  EXPECT_NE(md.find("- batches of 2000 tokens a side in 4 length-sorted parts on 2 data-parallel "
                    "ranks,"),
            std::string::npos)
      << md;
}
#endif

TEST_F(PtbParseRecipe, BadArgumentsAreOneClearLine) {
  const std::string dev = testing::shared_data_file("ptb-sample/dev.trees");
  CommandResult r = run_shell(command("--train " + dev + " --output " + (dir_ / "a").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "recipes/ptb-parse: give all of --train, --dev and --test, or none\n");
  r = run_shell(command("--train " + dev + " --dev " + dev + " --test " + (dir_ / "no").string() +
                        " --output " + (dir_ / "b").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "recipes/ptb-parse: " + (dir_ / "no").string() + ": no such treebank file (--test)\n");
  r = run_shell(command(treebanks() + " --batch-parts 0 --output " + (dir_ / "p").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "recipes/ptb-parse: --batch-parts must be at least 1, got 0\n");
  fs::create_directories(dir_ / "c");
  r = run_shell(command(treebanks() + " --output " + (dir_ / "c").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("exists: give --force"), std::string::npos) << r.out;
  // A broken treebank: the binary's one line, then the stage that failed.
  std::ofstream(dir_ / "broken.trees") << "((S (NP (NN a)))\n";
  r = run_shell(command("--train " + (dir_ / "broken.trees").string() + " --dev " + dev +
                        " --test " + dev + " --output " + (dir_ / "d").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find((dir_ / "broken.trees").string() +
                       ":1: unbalanced brackets: the bracket opened here is never closed"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("recipes/ptb-parse: stage 'data' failed"), std::string::npos) << r.out;
}

// The download path, on a local archive laid out as NLTK's (treebank/combined/wsj_NNNN.mrg).
TEST_F(PtbParseRecipe, DownloadsAndSplitsTheSampleByFile) {
  const std::string sample = testing::shared_data_file("ptb-sample/train.trees");
  const fs::path zip = dir_ / "treebank.zip";
  // Each file holds trees of the sample, spread over lines as .mrg files are.
  const std::string script =
      "import sys, zipfile\n"
      "trees = [l for l in open(sys.argv[1]) if l.strip()]\n"
      "with zipfile.ZipFile(sys.argv[2], 'w') as z:\n"
      "    for i, n in enumerate([1, 2, 159, 160, 179, 180, 199]):\n"
      "        body = ''.join(t.replace(') (', ')\\n  (') for t in trees[12*i:12*i+12])\n"
      "        z.writestr('treebank/combined/wsj_%04d.mrg' % n, body)\n";
  std::ofstream(dir_ / "make_zip.py") << script;
  ASSERT_EQ(
      run_shell("python3 " + (dir_ / "make_zip.py").string() + " " + sample + " " + zip.string())
          .status,
      0);
  const fs::path out = dir_ / "run";
  const CommandResult r = run_shell(
      command("--download --release-url file://" + zip.string() + " --output " + out.string()),
      false);
  ASSERT_EQ(r.status, 0) << r.out;
  // wsj_0001, 0002 and 0159 train; 0160 and 0179 dev; 0180 and 0199 test: 36, 24 and 24 trees,
  // of which the tiny profile keeps at most 200, 20 and 20.
  const std::vector<std::string> all = lines_of(read_file(sample));
  const std::vector<std::string> train = lines_of(read_file(out / "data/train.trees"));
  ASSERT_EQ(train.size(), 36u);
  // Each split starts with its first file's first tree, normalised on one line.
  auto one_line = [&](const std::string& tree) {
    std::ofstream(dir_ / "one.trees") << tree << "\n";
    return run_shell(tx("trees --normalised --input " + (dir_ / "one.trees").string()), false).out;
  };
  EXPECT_EQ(train[0] + "\n", one_line(all[0]));
  EXPECT_EQ(lines_of(read_file(out / "data/dev.trees"))[0] + "\n", one_line(all[36]));
  EXPECT_EQ(lines_of(read_file(out / "data/dev.trees")).size(), 20u);
  EXPECT_EQ(lines_of(read_file(out / "data/test.trees")).size(), 20u);
}

}  // namespace
}  // namespace transduce
