#include "model/precision.h"

#include "core/error.h"
#include "ops/ops.h"

namespace transduce {

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::BF16:
      return "bf16";
    case Precision::INT8:
      return "int8";
    default:
      return "fp32";
  }
}

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::FP32;
  if (name == "bf16") return Precision::BF16;
  fail("--precision must be fp32 or bf16, got '{}'", name);
}

Precision parse_compute_type(std::string_view name) {
  if (name == "fp32") return Precision::FP32;
  if (name == "bf16") return Precision::BF16;
  if (name == "int8") return Precision::INT8;
  fail("--compute-type must be fp32, bf16 or int8, got '{}'", name);
}

std::string gemm_description(Precision p) {
  if (p == Precision::FP32) return fmt::format("fp32 ({})", ops::fp32_gemm_library());
  if (p == Precision::BF16 && !ops::bf16_support().available)
    return fmt::format("bf16 (widened to fp32 for {}: no bf16 instructions, oneDNN finds {})",
                       ops::fp32_gemm_library(), ops::bf16_support().isa);
  if (p == Precision::INT8 && !ops::int8_support().available)
    return fmt::format(
        "int8 (exact sums in a plain loop: no int8 dot-product instructions, "
        "oneDNN finds {})",
        ops::int8_support().isa);
  const std::string isa = p == Precision::BF16 ? ops::bf16_support().isa : ops::int8_support().isa;
  return fmt::format("{} (oneDNN {}, {})", precision_name(p), ops::onednn_version(), isa);
}

}  // namespace transduce
