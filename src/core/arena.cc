#include "core/arena.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace transduce {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

Arena::Arena(size_t initial_bytes) {
  blocks_.reserve(64);
  add_block(initial_bytes);
}

void Arena::add_block(size_t min_bytes) {
  size_t size = round_up(std::max(min_bytes, size_t{kAlign}));
  char* p = static_cast<char*>(std::aligned_alloc(kAlign, size));
  if (!p) fail("out of memory: the activation arena could not grow by {} bytes", size);
  blocks_.push_back(Block{{p, std::free}, size, 0});
  ++system_allocations_;
}

Tensor Arena::alloc(const Shape& shape, DType dtype) {
  size_t bytes = round_up(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  Block* b = &blocks_.back();
  if (b->offset + bytes > b->size) {
    add_block(std::max(bytes, b->size));
    b = &blocks_.back();
  }
  void* p = b->data.get() + b->offset;
  b->offset += bytes;
  used_total_ += bytes;
  peak_ = std::max(peak_, used_total_);
  return Tensor::borrow(p, shape, dtype);
}

Tensor Arena::zeros(const Shape& shape, DType dtype) {
  Tensor t = alloc(shape, dtype);
  t.fill_zero();
  return t;
}

void Arena::reset() {
  if (blocks_.size() > 1) {
    // One block holding the most this arena has had in use at once. A workload that keeps
    // growing (a decoder, one position more each step) gets headroom from the second time on,
    // so it does not move to fresh memory every step.
    const size_t total = consolidations_++ == 0 ? peak_ : peak_ + peak_ / 2;
    blocks_.clear();
    add_block(total);
  }
  blocks_.back().offset = 0;
  used_total_ = 0;
}

size_t Arena::capacity() const {
  size_t c = 0;
  for (const Block& b : blocks_) c += b.size;
  return c;
}

}  // namespace transduce
