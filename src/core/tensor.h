// A tensor: a typed view (shape, strides, dtype, device) over memory that is either owned
// (shared, freed with the last owner) or borrowed from an Arena (valid until its reset).
#pragma once

#include <cstdint>
#include <memory>

#include "core/dtype.h"
#include "core/shape.h"

namespace transduce {

class Tensor {
 public:
  Tensor() = default;

  // Owning, uninitialised / zero-filled host memory.
  static Tensor empty(const Shape& shape, DType dtype = DType::F32);
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32);
  // Non-owning view of memory someone else keeps alive (an arena block, a mapped file).
  static Tensor borrow(void* data, const Shape& shape, DType dtype = DType::F32,
                       Device device = Device::CPU);

  bool defined() const { return data_ != nullptr || shape_.numel() == 0; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int ndim() const { return shape_.ndim(); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + ndim() : i]; }
  int64_t numel() const { return shape_.numel(); }
  int64_t rows() const { return shape_.rows(); }
  int64_t cols() const { return shape_.cols(); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;

  void* raw() const { return data_; }
  float* f32() const;
  int32_t* i32() const;
  uint8_t* u8() const;
  int8_t* i8() const;
  uint16_t* bf16() const;  // raw bfloat16 bits (core/bf16.h converts)

  // Same memory, new shape (contiguous tensors only; the element count must match).
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) of the tensor seen as a matrix over its first dimension.
  Tensor slice_rows(int64_t begin, int64_t end) const;
  void fill_zero() const;
  // Deep copy into owned memory.
  Tensor clone() const;
  void copy_from(const Tensor& src) const;

 private:
  // Shape, strides and type, no memory yet.
  static Tensor unallocated(const Shape& shape, DType dtype);

  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
  Shape shape_;
  Shape strides_;
  DType dtype_ = DType::F32;
  Device device_ = Device::CPU;
};

Shape contiguous_strides(const Shape& shape);

}  // namespace transduce
