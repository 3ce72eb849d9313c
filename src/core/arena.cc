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
  const size_t bytes = round_up(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  // The rest of a block too small for this tensor stays unused until the next reset.
  while (blocks_[current_].offset + bytes > blocks_[current_].size) {
    // Doubling the capacity keeps the number of blocks logarithmic in the peak.
    if (current_ + 1 == blocks_.size()) add_block(std::max(bytes, capacity()));
    blocks_[++current_].offset = 0;
  }
  Block& b = blocks_[current_];
  void* p = b.data.get() + b.offset;
  b.offset += bytes;
  used_total_ += bytes;
  peak_ = std::max(peak_, used_total_);
  return Tensor::borrow(p, shape, dtype);
}

Tensor Arena::zeros(const Shape& shape, DType dtype) {
  Tensor t = alloc(shape, dtype);
  t.fill_zero();
  return t;
}

void Arena::release(const Mark& m) {
  TD_CHECK(m.block < current_ || (m.block == current_ && m.offset <= blocks_[current_].offset),
           "arena release to a mark past the current allocation");
  current_ = m.block;
  blocks_[current_].offset = m.offset;
  used_total_ = m.used;
}

void Arena::reset() {
  release(Mark{0, 0, 0});
}

size_t Arena::capacity() const {
  size_t c = 0;
  for (const Block& b : blocks_) c += b.size;
  return c;
}

}  // namespace transduce
