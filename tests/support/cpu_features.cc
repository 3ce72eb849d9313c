#include "support/cpu_features.h"

#include <cpuid.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>

namespace transduce::testing {

namespace {

bool bit(uint32_t word, int n) {
  return ((word >> n) & 1u) != 0;
}

// XCR0, the register state the OS saves on a context switch (0 when the CPU has no XGETBV).
uint64_t enabled_state() {
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !bit(ecx, 27)) return 0;  // OSXSAVE
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

}  // namespace

CpuFeatures cpu_features() {
  CpuFeatures f;
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  const uint32_t leaf7_ebx = ebx, leaf7_ecx = ecx, leaf7_edx = edx, max_subleaf = eax;
  uint32_t leaf7_1_eax = 0;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) leaf7_1_eax = eax;

  const uint64_t xcr0 = enabled_state();
  // AVX-512 needs the SSE, AVX, opmask and both halves of the ZMM state enabled (bits 1, 2, 5-7);
  // AMX its tile configuration and data (bits 17, 18).
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;

  f.avx512 = zmm_state && bit(leaf7_ebx, 16);
  f.avx512_bf16 = f.avx512 && bit(leaf7_1_eax, 5);
  f.avx512_vnni = f.avx512 && bit(leaf7_ecx, 11);
  f.avx_vnni = ymm_state && bit(leaf7_1_eax, 4);
  f.amx_bf16 = tile_state && bit(leaf7_edx, 22);
  f.amx_int8 = tile_state && bit(leaf7_edx, 25);
  return f;
}

bool cpu_has_bf16_dot_products() {
  const CpuFeatures f = cpu_features();
  return f.avx512_bf16 || f.amx_bf16;
}

bool cpu_has_int8_dot_products() {
  const CpuFeatures f = cpu_features();
  return f.avx512_vnni || f.avx_vnni || f.amx_int8;
}

std::string cpu_feature_names() {
  const CpuFeatures f = cpu_features();
  std::string names;
  for (const auto& [has, name] : {std::pair{f.avx512, "avx512"},
                                  {f.avx512_bf16, "avx512_bf16"},
                                  {f.amx_bf16, "amx_bf16"},
                                  {f.avx512_vnni, "avx512_vnni"},
                                  {f.avx_vnni, "avx_vnni"},
                                  {f.amx_int8, "amx_int8"}})
    if (has) names += (names.empty() ? "" : " ") + std::string(name);
  return names.empty() ? "none of them" : names;
}

void expect_native_kernel(const std::string& kind, const std::string& detail,
                          const std::string& kernel, bool cpu_has, std::string_view fallback) {
  std::cout << "kernel exercised: " << kind << ": " << kernel << "; CPU: " << cpu_feature_names()
            << "; " << detail << std::endl;
  if (!cpu_has) return;
  EXPECT_FALSE(kernel.starts_with(fallback) || kernel.starts_with("ref:"))
      << kind << " (" << detail << ") ran " << kernel << " on a CPU with " << cpu_feature_names()
      << ": the native kernel did not run (is ONEDNN_MAX_CPU_ISA set?)";
}

}  // namespace transduce::testing
