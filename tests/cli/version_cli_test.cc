// `transduce --version`: the release the Python package carries too, the MPI library as Open MPI's
// own launcher names its version, and the GEMM paths as the CPU (or ONEDNN_MAX_CPU_ISA) allows.
#include <gtest/gtest.h>

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
  // Three lines and nothing else: scripts read them.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
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
