#include "core/tensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace transduce {

Shape contiguous_strides(const Shape& shape) {
  Shape s = shape;
  int64_t stride = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    s[i] = stride;
    stride *= shape[i];
  }
  return s;
}

Tensor Tensor::unallocated(const Shape& shape, DType dtype) {
  Tensor t;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  Tensor t = unallocated(shape, dtype);
  size_t bytes = (t.nbytes() + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (!p) fail("out of memory allocating a tensor of shape {}", shape.str());
  t.owner_ = std::shared_ptr<void>(p, std::free);
  t.data_ = p;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = unallocated(shape, dtype);
  // calloc, not memset: a large block comes as fresh zero pages that take no memory until they
  // are written (a translating model never writes the gradients it is made with).
  const size_t bytes = (t.nbytes() + 63) / 64 * 64;
  void* raw = std::calloc(bytes + 64, 1);
  if (!raw) fail("out of memory allocating a tensor of shape {}", shape.str());
  t.owner_ = std::shared_ptr<void>(raw, std::free);
  t.data_ = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + 63) / 64 * 64);
  return t;
}

Tensor Tensor::borrow(void* data, const Shape& shape, DType dtype, Device device) {
  Tensor t = unallocated(shape, dtype);
  t.data_ = data;
  t.device_ = device;
  return t;
}

bool Tensor::is_contiguous() const {
  return strides_ == contiguous_strides(shape_);
}

float* Tensor::f32() const {
  TD_CHECK(dtype_ == DType::F32, "tensor is {}, not F32", dtype_name(dtype_));
  return static_cast<float*>(data_);
}

int32_t* Tensor::i32() const {
  TD_CHECK(dtype_ == DType::I32, "tensor is {}, not I32", dtype_name(dtype_));
  return static_cast<int32_t*>(data_);
}

uint8_t* Tensor::u8() const {
  TD_CHECK(dtype_ == DType::U8, "tensor is {}, not U8", dtype_name(dtype_));
  return static_cast<uint8_t*>(data_);
}

int8_t* Tensor::i8() const {
  TD_CHECK(dtype_ == DType::I8, "tensor is {}, not I8", dtype_name(dtype_));
  return static_cast<int8_t*>(data_);
}

uint16_t* Tensor::bf16() const {
  TD_CHECK(dtype_ == DType::BF16, "tensor is {}, not BF16", dtype_name(dtype_));
  return static_cast<uint16_t*>(data_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  TD_CHECK(is_contiguous(), "reshape of a strided tensor");
  TD_CHECK(shape.numel() == numel(), "reshape {} -> {}", shape_.str(), shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  return t;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
  TD_CHECK(ndim() >= 1 && 0 <= begin && begin <= end && end <= shape_[0], "slice_rows {}..{} of {}",
           begin, end, shape_.str());
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.data_ = static_cast<char*>(data_) + begin * strides_[0] * dtype_size(dtype_);
  return t;
}

void Tensor::fill_zero() const {
  TD_CHECK(device_ == Device::CPU && is_contiguous(), "fill_zero on this tensor");
  if (numel()) std::memset(data_, 0, nbytes());
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_);
  t.copy_from(*this);
  return t;
}

void Tensor::copy_from(const Tensor& src) const {
  TD_CHECK(src.shape_ == shape_ && src.dtype_ == dtype_, "copy {} {} into {} {}", src.shape_.str(),
           dtype_name(src.dtype_), shape_.str(), dtype_name(dtype_));
  TD_CHECK(is_contiguous() && src.is_contiguous(), "copy of strided tensors");
  if (numel()) std::memcpy(data_, src.data_, nbytes());
}

}  // namespace transduce
