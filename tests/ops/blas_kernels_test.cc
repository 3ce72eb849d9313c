// The choice of OpenBLAS kernels transduce makes for itself (ops/cpu/blas_kernels.h).
#include <gtest/gtest.h>

#include <cblas.h>

#include <string>

#include "ops/cpu/blas_kernels.h"
#include "ops/ops.h"
#include "support/run_command.h"

namespace transduce {
namespace {

TEST(BlasKernels, AvxTwoKernelsOnAnAvx512CpuAreReplaced) {
  EXPECT_EQ(ops::better_openblas_coretype("Haswell", true, false), "SKYLAKEX");
  EXPECT_EQ(ops::better_openblas_coretype("Zen", true, false), "SKYLAKEX");
  EXPECT_EQ(ops::better_openblas_coretype("Sandybridge", true, false), "SKYLAKEX");
}

TEST(BlasKernels, TheRightKernelsOrTheUsersChoiceStand) {
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    EXPECT_EQ(ops::better_openblas_coretype(core, true, false), std::nullopt) << core;
  EXPECT_EQ(ops::better_openblas_coretype("Haswell", false, false), std::nullopt);  // no AVX-512
  EXPECT_EQ(ops::better_openblas_coretype("Haswell", true, true), std::nullopt);    // user's choice
}

// What the logs and `bench` name is the kernel set OpenBLAS runs.
TEST(BlasKernels, TheLibraryNameNamesTheKernels) {
  const std::string core = openblas_get_corename();
  EXPECT_NE(ops::fp32_gemm_library().find("(" + core + ")"), std::string::npos)
      << ops::fp32_gemm_library();
}

// On a CPU with AVX-512 the binary runs OpenBLAS's AVX-512 kernels, whether OpenBLAS knows the CPU
// or transduce had to ask for them (on CPUs newer than OpenBLAS 0.3.21); on others, others.
TEST(BlasKernels, TheBinaryRunsAvx512KernelsOnAnAvx512Cpu) {
  const bool avx512 = ops::cpu_has_avx512();
  const testing::CommandResult r = testing::run_shell(
      "env -u OPENBLAS_CORETYPE " + std::string(TRANSDUCE_BINARY) +
      " --threads 1 bench train --preset tiny --layers 1 --batch-sentences 4 --steps 1");
  ASSERT_EQ(r.status, 0) << r.out;
  const bool avx512_kernels = r.out.find("(SkylakeX))") != std::string::npos ||
                              r.out.find("(Cooperlake))") != std::string::npos ||
                              r.out.find("(SapphireRapids))") != std::string::npos;
  EXPECT_EQ(avx512_kernels, avx512) << r.out;
}

// Where OpenBLAS falls back to AVX2 kernels on an AVX-512 CPU (imitated by a preloaded
// openblas_get_corename that answers as OpenBLAS 0.3.21 does on a CPU it does not know), the binary
// starts itself again with OPENBLAS_CORETYPE=SKYLAKEX and runs those kernels.
TEST(BlasKernels, TheBinaryAsksForAvx512KernelsWhereOpenBlasFellBack) {
  const bool avx512 = ops::cpu_has_avx512();
  // The sanitizer build wants its runtime first among the libraries: the preload comes before.
  const testing::CommandResult r = testing::run_shell(
      "env -u OPENBLAS_CORETYPE ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 "
      "LD_PRELOAD=" TRANSDUCE_UNKNOWN_CPU_OPENBLAS " " +
      std::string(TRANSDUCE_BINARY) +
      " --threads 1 bench train --preset tiny --layers 1 --batch-sentences 4 --steps 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(avx512 ? "(SkylakeX))" : "(Haswell))"), std::string::npos) << r.out;
}

// The binary keeps a kernel choice the user made, and reports the kernels it runs.
TEST(BlasKernels, TheBinaryKeepsTheUsersChoiceAndSaysWhichKernelsRun) {
  const testing::CommandResult r = testing::run_shell(
      "OPENBLAS_CORETYPE=Haswell " + std::string(TRANSDUCE_BINARY) +
      " --threads 1 bench train --preset tiny --layers 1 --batch-sentences 4 --steps 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("GEMMs      fp32 (OpenBLAS 0.3.21 (Haswell))"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace transduce
