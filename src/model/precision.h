// What a model's GEMMs compute in: fp32, or bf16 inputs with fp32 sums (weights, their
// gradients, the optimizer and everything outside the GEMMs stay fp32).
#pragma once

#include <string>
#include <string_view>

namespace transduce {

enum class Precision { FP32, BF16 };

std::string_view precision_name(Precision p);  // "fp32", "bf16"
// "fp32" or "bf16"; anything else is one line naming the choices.
Precision parse_precision(std::string_view name);
// Fails with one line when this CPU cannot run `p` (bf16 needs AVX512-BF16 or AMX).
void require_precision(Precision p);
// What runs the GEMMs in `p`, for logs: "fp32 (OpenBLAS 0.3.21 (SkylakeX))",
// "bf16 (oneDNN 2.6.3, avx512_core_amx)".
std::string gemm_description(Precision p);

}  // namespace transduce
