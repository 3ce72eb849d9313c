#include "ops/cpu/blas_kernels.h"

#include <cblas.h>

#include <array>
#include <cstdlib>

namespace transduce::ops {

std::optional<std::string> better_openblas_coretype(std::string_view chosen, bool cpu_has_avx512,
                                                    bool user_set) {
  if (user_set || !cpu_has_avx512) return std::nullopt;
  // OpenBLAS 0.3.21's AVX-512 kernel sets: anything else leaves AVX-512 unused.
  constexpr std::array<std::string_view, 3> avx512 = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  for (std::string_view core : avx512)
    if (chosen == core) return std::nullopt;
  return "SKYLAKEX";
}

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

std::optional<std::string> better_openblas_coretype() {
  return better_openblas_coretype(openblas_get_corename(), cpu_has_avx512(),
                                  std::getenv("OPENBLAS_CORETYPE") != nullptr);
}

}  // namespace transduce::ops
