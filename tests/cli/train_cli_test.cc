// `transduce train` as a user runs it: vocabulary, a few updates, checkpoints, resume, and bad
// corpora refused with one line and a failing exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/run_command.h"
#include "support/toy_corpus.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::run_transduce;

class TrainCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_toy_corpus(dir_);
    const std::string failed = testing::make_toy_vocab(dir_);
    ASSERT_TRUE(failed.empty()) << failed;
  }

  std::string data_flags(const std::string& src = "train.src",
                         const std::string& tgt = "train.tgt") {
    return "--src " + dir_ + "/" + src + " --tgt " + dir_ + "/" + tgt;
  }
  static std::string model_flags() {
    return "--layers 1 --d-model 16 --d-ff 32 --heads 2 --batch-tokens 200 --warmup 10 "
           "--log-every 2";
  }
  testing::TempDir tmp_{"transduce_train_cli"};
  const std::string dir_ = tmp_.path();
};

TEST_F(TrainCommand, TrainsSavesAndResumes) {
  const std::string model = dir_ + "/model";
  CommandResult r =
      run_transduce("train " + data_flags() + " --valid-src " + dir_ + "/train.src --valid-tgt " +
                    dir_ + "/train.tgt --vocab " + dir_ + "/vocab --out " + model + " " +
                    model_flags() + " --max-steps 4 --save-every 2 --valid-every 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("step 4 | epoch 1 | loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("valid step 2 | loss "), std::string::npos) << r.out;
  for (const char* f :
       {"config.json", "spm.model", "model.safetensors",
        "checkpoints/step-00000002/optimizer.safetensors", "checkpoints/step-00000004/state.json"})
    EXPECT_TRUE(fs::exists(model + "/" + f)) << f;

  // A second `train --out` into the same directory is refused; `--resume` goes on.
  r = run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --out " + model +
                    " --max-steps 6");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  r = run_transduce("train --resume " + model + " " + data_flags() + " --max-steps 6");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("at step 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 6 | epoch"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(model + "/checkpoints/step-00000006/model.safetensors"));
}

TEST_F(TrainCommand, BadCorporaGetOneLineAndAFailingExit) {
  {
    std::ofstream(dir_ + "/short.tgt") << "ONE\nTWO\n";
    std::ofstream(dir_ + "/bad.tgt") << "RED DOG\n\xff\xfe BROKEN\n";
    std::ofstream(dir_ + "/two.src") << "red dog\nthe cat\n";
  }
  const std::string common = " --vocab " + dir_ + "/vocab " + model_flags() + " --max-steps 2";
  CommandResult r = run_transduce("train " + data_flags("train.src", "short.tgt") + " --out " +
                                  dir_ + "/m1" + common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("train.src has 300 lines but " + dir_ + "/short.tgt has 2"),
            std::string::npos)
      << r.out;
  r = run_transduce("train " + data_flags("two.src", "bad.tgt") + " --out " + dir_ + "/m2" +
                    common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("bad.tgt:2: invalid UTF-8"), std::string::npos) << r.out;
  r = run_transduce("train " + data_flags("missing.src", "train.tgt") + " --out " + dir_ + "/m3" +
                    common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("missing.src"), std::string::npos) << r.out;
  r = run_transduce("train " + data_flags() + " --out " + dir_ + "/m4 --vocab " + dir_ + "/vocab " +
                    model_flags());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--max-steps"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace transduce
