// What a launcher's environment says about this process.
#include "dist/launch.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/threads.h"

namespace transduce {
namespace {

// Sets launcher variables for one test and restores the environment after it.
class LauncherEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name, value->c_str(), 1);
      else
        unsetenv(name);
    }
  }
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_SIZE",
                                           "OMPI_COMM_WORLD_LOCAL_SIZE",
                                           "PMI_RANK",
                                           "PMI_SIZE",
                                           "MPI_LOCALNRANKS"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST_F(LauncherEnv, NoLauncherMeansOneProcess) {
  EXPECT_FALSE(launch_info().has_value());
  EXPECT_EQ(connect_ranks(600), nullptr);
}

TEST_F(LauncherEnv, ReadsOpenMpiAndPmiVariables) {
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  std::optional<LaunchInfo> info = launch_info();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->size, 8);
  EXPECT_EQ(info->local_size, 4);

  for (const char* name : kNames) unsetenv(name);
  setenv("PMI_RANK", "1", 1);
  setenv("PMI_SIZE", "2", 1);
  info = launch_info();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->rank, 1);
  EXPECT_EQ(info->size, 2);
  EXPECT_EQ(info->local_size, 1);
}

TEST_F(LauncherEnv, IgnoresNonsense) {
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);  // rank beyond the size
  EXPECT_FALSE(launch_info().has_value());
  setenv("OMPI_COMM_WORLD_RANK", "x", 1);
  EXPECT_FALSE(launch_info().has_value());
}

TEST_F(LauncherEnv, OneRankIsASingleProcess) {
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  EXPECT_EQ(connect_ranks(600), nullptr);  // no MPI start-up for a job of one
}

// The refusal path exists only in a build without MPI (CI builds and tests one).
#if !TRANSDUCE_WITH_MPI
TEST_F(LauncherEnv, SeveralRanksNeedAnMpiBuild) {
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    connect_ranks(600);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-DTRANSDUCE_MPI=ON"), std::string::npos) << e.what();
  }
}
#endif

TEST(DefaultThreads, ShareTheCoresWhenTheRanksAreNotBound) {
  EXPECT_EQ(default_threads_per_rank(1), num_cores());
  if (num_cores() != sysconf(_SC_NPROCESSORS_ONLN)) {
    // This process is bound (taskset, a launcher): each rank keeps the cores it was given.
    EXPECT_EQ(default_threads_per_rank(2), num_cores());
    return;
  }
  EXPECT_EQ(default_threads_per_rank(num_cores()), 1);
  EXPECT_EQ(default_threads_per_rank(4 * num_cores()), 1);
  if (num_cores() >= 4) {
    EXPECT_EQ(default_threads_per_rank(2), num_cores() / 2);
  }
}

TEST(BindingWarning, OnlyWhenTheRanksCannotUseTheMachine) {
  EXPECT_EQ(binding_warning(1, 2, 2), "");    // two ranks, a core each: all used
  EXPECT_EQ(binding_warning(8, 16, 2), "");   // --map-by slot:PE=8
  EXPECT_EQ(binding_warning(16, 16, 2), "");  // unbound
  const std::string w = binding_warning(1, 16, 2);
  EXPECT_NE(w.find("1 of this machine's 16 cores"), std::string::npos) << w;
  EXPECT_NE(w.find("--map-by slot:PE=8"), std::string::npos) << w;
}

}  // namespace
}  // namespace transduce
