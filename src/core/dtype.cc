#include "core/dtype.h"

namespace transduce {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::BF16:
    case DType::F16:
      return 2;
    case DType::I64:
      return 8;
    case DType::U8:
    case DType::I8:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::BF16:
      return "BF16";
    case DType::F16:
      return "F16";
    case DType::I32:
      return "I32";
    case DType::I64:
      return "I64";
    case DType::U8:
      return "U8";
    case DType::I8:
      return "I8";
  }
  return "?";
}

bool dtype_from_name(std::string_view name, DType* out) {
  for (DType t :
       {DType::F32, DType::BF16, DType::F16, DType::I32, DType::I64, DType::U8, DType::I8}) {
    if (dtype_name(t) == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::string_view device_name(Device d) {
  return d == Device::CPU ? "cpu" : "cuda";
}

}  // namespace transduce
