// The command line as a script would use it: `transduce params` and its errors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "model/config.h"
#include "support/run_command.h"

namespace transduce {
namespace {

using testing::CommandResult;

CommandResult run(const std::string& args, bool merge_stderr = false) {
  return testing::run_transduce(args, merge_stderr);
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

TEST(ParamsCommand, FirstLineIsThePlainCount) {
  CommandResult r = run("params --preset base --vocab-size 37000");
  ASSERT_EQ(r.status, 0);
  ModelConfig c = ModelConfig::preset("base");
  c.vocab_size = 37000;
  EXPECT_EQ(first_line(r.out), std::to_string(c.parameter_count()));
}

TEST(ParamsCommand, FlagsOverrideThePreset) {
  CommandResult r = run("params --preset base --vocab-size 37000 --d-k 16");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(first_line(r.out), "55990784");
  // --d-model alone follows Table 3 row C: d_k = d_v = d_model / h.
  r = run("params --preset base --vocab-size 37000 --d-model 256");
  ASSERT_EQ(r.status, 0);
  ModelConfig c = ModelConfig::preset("base");
  c.vocab_size = 37000;
  c.d_model = 256;
  c.d_k = c.d_v = 32;
  EXPECT_EQ(first_line(r.out), std::to_string(c.parameter_count()));
  // Building the model and counting its tensors agrees with the formula.
  CommandResult built = run("params --preset tiny --vocab-size 8000 --positions learned --build");
  CommandResult formula = run("params --preset tiny --vocab-size 8000 --positions learned");
  EXPECT_EQ(first_line(built.out), first_line(formula.out));
}

TEST(ParamsCommand, BadValuesGetOneLineAndAFailingExit) {
  for (const char* args : {"params --preset huge", "params --dropout 1.5", "params --layers 0",
                           "params --d-model 100 --heads 8"}) {
    CommandResult r = run(args, true);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_FALSE(r.out.empty()) << args;
  }
  CommandResult r = run("params --dropout 1.5", true);
  EXPECT_NE(r.out.find("--dropout"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace transduce
