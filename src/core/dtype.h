// Element types and devices a tensor can have.
#pragma once

#include <cstddef>
#include <string_view>

namespace transduce {

enum class DType { F32, BF16, F16, I32, I64, U8, I8 };
enum class Device { CPU, CUDA };

size_t dtype_size(DType t);
// The safetensors spelling: "F32", "BF16", "F16", "I32", "I64", "U8", "I8".
std::string_view dtype_name(DType t);
// Returns false when `name` is not a type transduce can hold.
bool dtype_from_name(std::string_view name, DType* out);
std::string_view device_name(Device d);

}  // namespace transduce
