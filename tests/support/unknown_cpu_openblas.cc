// Preloaded into transduce by tests/ops/blas_kernels_test.cc: OpenBLAS's kernel choice as on a CPU
// newer than OpenBLAS 0.3.21 (Haswell's AVX2 kernels), unless OPENBLAS_CORETYPE asks for
// Skylake-X's, which OpenBLAS honours.
#include <cstdlib>
#include <cstring>

extern "C" char* openblas_get_corename() {
  static char haswell[] = "Haswell", skylakex[] = "SkylakeX";
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  return asked && std::strcmp(asked, "SKYLAKEX") == 0 ? skylakex : haswell;
}
