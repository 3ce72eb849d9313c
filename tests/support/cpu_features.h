// What the CPU offers the reduced-precision products, read from the CPU itself (cpuid, and the
// register state the operating system saves), not from oneDNN: so that a test can tell "this CPU
// has bf16 dot products and they did not run" from "this CPU has none".
#pragma once

#include <string>
#include <string_view>

namespace transduce::testing {

struct CpuFeatures {
  bool avx512 = false;       // AVX-512 Foundation, with its registers enabled by the OS
  bool avx512_bf16 = false;  // VDPBF16PS: bf16 dot products
  bool amx_bf16 = false;     // AMX tiles of bf16 (enabled by the OS)
  bool avx512_vnni = false;  // VPDPBUSD on 512-bit registers: int8 dot products
  bool avx_vnni = false;     // the same on 256-bit registers (AVX-VNNI)
  bool amx_int8 = false;     // AMX tiles of int8 (enabled by the OS)
};

CpuFeatures cpu_features();

// Whether the CPU can run bf16 (int8) GEMMs on dot-product instructions: where it can, the
// tests require the native kernels to be the ones that ran.
bool cpu_has_bf16_dot_products();
bool cpu_has_int8_dot_products();

// "avx512 avx512_bf16 amx_bf16 ..." (the features above this CPU has), or "none of them".
std::string cpu_feature_names();

// Says which kernel ran a product: a line "kernel exercised: KIND: KERNEL; CPU: FEATURES; DETAIL"
// on standard output, which ctest's JUnit file keeps and scripts/test sums up at the end. A gtest
// failure when the CPU has the dot products (`cpu_has`) but the kernel is the fallback for CPUs
// without them (its name starts with `fallback`) or oneDNN's reference code ("ref:").
void expect_native_kernel(const std::string& kind, const std::string& detail,
                          const std::string& kernel, bool cpu_has, std::string_view fallback);

}  // namespace transduce::testing
