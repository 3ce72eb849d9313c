// `transduce vocab` as a script would run it: files written, bad input refused with file:line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_command.h"
#include "text/tokenizer.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;

CommandResult run(const std::string& args, bool merge_stderr = true) {
  return testing::run_transduce(args, merge_stderr);
}

class VocabCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_vocab_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    // A small corpus: numbered sentences over a few words, German and English-looking.
    static const char* const kWords[] = {"ein", "Hund", "läuft", "über", "die", "Straße",
                                         "a",   "dog",  "runs",  "over", "the", "street"};
    std::ofstream en(dir_ + "/train.en"), de(dir_ + "/train.de");
    for (int i = 0; i < 200; ++i) {
      for (int w = 0; w < 6; ++w) en << (w ? " " : "") << kWords[6 + (i * 7 + w * 3) % 6];
      en << " " << i << ".\n";
      for (int w = 0; w < 6; ++w) de << (w ? " " : "") << kWords[(i * 5 + w * 7) % 6];
      de << " " << i << ".\n";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Files in `dir` whose name starts with ".spm.tmp" (left behind by a failed run).
  static int temp_files(const std::string& dir) {
    int n = 0;
    if (!fs::exists(dir)) return 0;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().starts_with(".spm.tmp")) ++n;
    return n;
  }

  std::string dir_;
};

TEST_F(VocabCommand, WritesTheModelAndVocabulary) {
  const std::string out = dir_ + "/new/vocab";  // created, parents included
  CommandResult r = run("--threads 2 vocab --input " + dir_ + "/train.en " + dir_ +
                        "/train.de --vocab-size 80 --output " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(out + "/spm.model"));
  EXPECT_TRUE(fs::exists(out + "/spm.vocab"));
  EXPECT_EQ(temp_files(out), 0);
  EXPECT_NE(r.out.find("80 pieces"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("400 lines"), std::string::npos) << r.out;
  EXPECT_EQ(Tokenizer(out + "/spm.model").vocab_size(), 80);

  r = run("vocab --input " + dir_ + "/train.en --vocab-size 48 --output " + out +
          " --vocab-type unigram");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(Tokenizer(out + "/spm.model").vocab_size(), 48);
}

TEST_F(VocabCommand, InvalidUtf8IsRefusedWithFileAndLine) {
  const std::string bad = dir_ + "/bad.de";
  std::ofstream(bad) << "ein Hund\nzwei \xFF Hunde\n";
  const std::string out = dir_ + "/v";
  CommandResult r =
      run("vocab --input " + dir_ + "/train.en " + bad + " --vocab-size 80 --output " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find(bad + ":2: invalid UTF-8"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out + "/spm.model"));
}

TEST_F(VocabCommand, BadRunsFailWithOneLineAndLeaveNothing) {
  const std::string out = dir_ + "/v";
  CommandResult r = run("vocab --input " + dir_ + "/missing.txt --vocab-size 80 --output " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find(dir_ + "/missing.txt"), std::string::npos) << r.out;

  r = run("vocab --input " + dir_ + "/train.en --vocab-size 100000 --output " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("smaller size"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_FALSE(fs::exists(out + "/spm.model"));
  EXPECT_EQ(temp_files(out), 0);

  r = run("vocab --input " + dir_ + "/train.en --vocab-size 80 --output " + out +
          " --vocab-type wordpiece");
  EXPECT_NE(r.status, 0);
}

}  // namespace
}  // namespace transduce
