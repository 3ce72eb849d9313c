// What a model's GEMMs compute in: fp32; bf16 inputs with fp32 sums (weights, their gradients,
// the optimizer and everything outside the GEMMs stay fp32); or, for inference only, int8 weights
// and activations with exact int32 sums (ops::gemm_int8).
#pragma once

#include <string>
#include <string_view>

namespace transduce {

enum class Precision { FP32, BF16, INT8 };

std::string_view precision_name(Precision p);  // "fp32", "bf16", "int8"
// Training's --precision: "fp32" or "bf16"; anything else is one line naming the choices.
Precision parse_precision(std::string_view name);
// Inference's --compute-type: "fp32", "bf16" or "int8".
Precision parse_compute_type(std::string_view name);
// What runs the GEMMs in `p`, for logs: "fp32 (OpenBLAS 0.3.21 (SkylakeX))",
// "bf16 (oneDNN 2.6.3, avx512_core_amx)", "int8 (oneDNN 2.6.3, avx512_core_amx)", or on a CPU
// without the instructions "bf16 (widened to fp32 for OpenBLAS ...)", "int8 (exact sums in a
// plain loop ...)": the same numbers, without the instructions that make them fast.
std::string gemm_description(Precision p);

}  // namespace transduce
