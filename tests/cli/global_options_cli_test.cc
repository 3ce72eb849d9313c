// Global options (--threads) are accepted before the subcommand and after it, as users type them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_command.h"

namespace transduce {
namespace {

using testing::CommandResult;
using testing::kSmallTrainBench;

int threads_reported(const std::string& args) {
  CommandResult r = testing::run_transduce_apart(args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return nlohmann::json::parse(r.out).at("threads").get<int>();
}

TEST(GlobalOptions, ThreadsBeforeOrAfterTheSubcommand) {
  EXPECT_EQ(threads_reported(std::string("--threads 1 ") + kSmallTrainBench), 1);
  EXPECT_EQ(threads_reported(std::string(kSmallTrainBench) + " --threads 1"), 1);
  EXPECT_EQ(threads_reported(std::string(kSmallTrainBench) + " --threads 2"), 2);
}

TEST(GlobalOptions, AfterTheSubcommandTheyAreStillChecked) {
  CommandResult r = testing::run_transduce("params --preset tiny --threads -1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--threads"), std::string::npos) << r.out;
}

TEST(GlobalOptions, UnknownOptionsAreStillRefused) {
  CommandResult r = testing::run_transduce("params --preset tiny --no-such-flag 3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--no-such-flag"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace transduce
