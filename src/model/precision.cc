#include "model/precision.h"

#include "core/error.h"
#include "ops/ops.h"

namespace transduce {

std::string_view precision_name(Precision p) {
  return p == Precision::BF16 ? "bf16" : "fp32";
}

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::FP32;
  if (name == "bf16") return Precision::BF16;
  fail("--precision must be fp32 or bf16, got '{}'", name);
}

void require_precision(Precision p) {
  if (p != Precision::BF16) return;
  const ops::Bf16Support s = ops::bf16_support();
  if (!s.available)
    fail(
        "--precision bf16 needs a CPU with bf16 dot-product instructions (AVX512-BF16 or AMX); "
        "oneDNN finds {} on this one: use --precision fp32",
        s.isa);
}

std::string gemm_description(Precision p) {
  if (p == Precision::FP32) return fmt::format("fp32 ({})", ops::fp32_gemm_library());
  return fmt::format("bf16 (oneDNN {}, {})", ops::onednn_version(), ops::bf16_support().isa);
}

}  // namespace transduce
