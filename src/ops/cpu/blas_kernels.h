// Which kernels OpenBLAS runs the fp32 GEMMs with. Debian's OpenBLAS 0.3.21 picks them by CPU
// model when it loads and, on CPUs newer than itself (an AMD EPYC of family 0x1A was one of this
// project's machines), falls back to Haswell's AVX2 kernels at about half the speed, although its
// Skylake-X AVX-512 kernels run correctly there. Only OPENBLAS_CORETYPE, read when the library
// loads, changes the choice: transduce re-executes itself with it set (cli/main.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace transduce::ops {

// The OPENBLAS_CORETYPE this process should run with, given the kernels OpenBLAS chose
// (openblas_get_corename(): "Haswell", "SkylakeX", ...), whether the CPU has AVX-512 (F, BW, DQ,
// VL) and whether the user set OPENBLAS_CORETYPE; nullopt when the choice stands.
std::optional<std::string> better_openblas_coretype(std::string_view chosen, bool cpu_has_avx512,
                                                    bool user_set);

// Whether this CPU has the AVX-512 subsets OpenBLAS's AVX-512 kernels use (F, BW, DQ, VL).
bool cpu_has_avx512();

// The same for this process and CPU.
std::optional<std::string> better_openblas_coretype();

}  // namespace transduce::ops
