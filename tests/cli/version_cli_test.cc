// `transduce --version`: the release the Python package carries too, the commit, the MPI library as
// Open MPI's own launcher names its version, and the GEMM paths as the CPU (or ONEDNN_MAX_CPU_ISA)
// allows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "support/run_command.h"

namespace transduce {
namespace {

using testing::CommandResult;

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(TRANSDUCE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first capture of `pattern` in `text`, or "" (with a failure) when it does not match.
std::string first_capture(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) {
    ADD_FAILURE() << "no match for " << pattern << " in:\n" << text;
    return "";
  }
  return m[1].str();
}

TEST(VersionCommand, NamesTheReleaseThePythonPackageCarries) {
  const CommandResult r = testing::run_transduce_apart("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string release = first_capture(r.out, "^transduce ([0-9]+\\.[0-9]+\\.[0-9]+)\n");
  EXPECT_EQ(release, first_capture(read_source_file("pyproject.toml"), "\nversion = \"([^\"]+)\""));
  EXPECT_EQ(release, first_capture(read_source_file("python/transduce/__init__.py"),
                                   "__version__ = \"([^\"]+)\""));
  // Four lines and nothing else: scripts read them.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
}

// The commit is the checkout's HEAD or one before it (a build, then a commit, then the tests),
// never one the checkout does not have; "unknown" where the sources are no git checkout.
TEST(VersionCommand, NamesTheCommitItWasBuiltFrom) {
  const CommandResult r = testing::run_transduce_apart("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string commit = first_capture(r.out, "\nCommit: ([^\n]*)\n");
  const std::string git = "git -C '" + std::string(TRANSDUCE_SOURCE_DIR) + "' ";
  if (testing::run_shell(git + "rev-parse --git-dir").status != 0) {
    EXPECT_EQ(commit, "unknown");
    return;
  }
  const std::string hash = first_capture(commit, "^([0-9a-f]{7,})(?: with uncommitted changes)?$");
  ASSERT_FALSE(hash.empty()) << commit;
  const CommandResult ancestor =
      testing::run_shell(git + "merge-base --is-ancestor " + hash + " HEAD");
  EXPECT_EQ(ancestor.status, 0) << hash << " is not HEAD or before it: " << ancestor.out;
}

// A benchmark's JSON names the same commit, so that a recorded figure says which build made it.
TEST(VersionCommand, BenchmarksReportTheSameCommit) {
  const CommandResult version = testing::run_transduce_apart("--version");
  ASSERT_EQ(version.status, 0) << version.err;
  const std::string commit = first_capture(version.out, "\nCommit: ([^\n]*)\n");
  const CommandResult bench =
      testing::run_transduce_apart(std::string("--threads 1 ") + testing::kSmallTrainBench);
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_EQ(nlohmann::json::parse(bench.out).at("commit").get<std::string>(), commit);
  const CommandResult translate = testing::run_transduce_apart(
      "--threads 1 bench translate --preset tiny --layers 1 --d-model 32 --d-ff 64 --heads 2 "
      "--vocab-size 64 --sentences 2 --json");
  ASSERT_EQ(translate.status, 0) << translate.err;
  EXPECT_EQ(nlohmann::json::parse(translate.out).at("commit").get<std::string>(), commit);
}

TEST(VersionCommand, NamesTheMpiLibraryOrItsAbsence) {
  const CommandResult r = testing::run_transduce_apart("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string mpi = first_capture(r.out, "\nMPI: ([^\n]*)\n");
#if TRANSDUCE_WITH_MPI
  // `mpirun --version` says "mpirun (Open MPI) 4.1.4": the library must name the same release.
  const CommandResult launcher = testing::run_shell("mpirun --version");
  ASSERT_EQ(launcher.status, 0) << launcher.out;
  const std::string release = first_capture(launcher.out, "\\(Open MPI\\) ([0-9.]+)");
  EXPECT_NE(mpi.find("Open MPI v" + release), std::string::npos) << mpi;
#else
  EXPECT_EQ(mpi, "none (built without MPI: one process only)");
#endif
}

TEST(VersionCommand, NamesTheGemmPathsThisCpuGets) {
  const CommandResult r = testing::run_transduce_apart("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string gemms = first_capture(r.out, "\nGEMMs: ([^\n]*)\n");
  EXPECT_EQ(gemms.rfind("fp32 (OpenBLAS ", 0), 0u) << gemms;
  EXPECT_NE(gemms.find("; bf16 ("), std::string::npos) << gemms;
  EXPECT_NE(gemms.find("; int8 ("), std::string::npos) << gemms;
  // Without AVX-512 oneDNN has neither bf16 products nor VNNI: both fall back, and say so.
  const CommandResult avx2 = testing::run_shell(
      "ONEDNN_MAX_CPU_ISA=AVX2 " + std::string(TRANSDUCE_BINARY) + " --version", false);
  ASSERT_EQ(avx2.status, 0) << avx2.out;
  EXPECT_NE(avx2.out.find("bf16 (widened to fp32 for OpenBLAS"), std::string::npos) << avx2.out;
  EXPECT_NE(avx2.out.find("int8 (exact sums in a plain loop"), std::string::npos) << avx2.out;
}

}  // namespace
}  // namespace transduce
