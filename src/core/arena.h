// Bump allocator for one training step's activations. reset() frees everything at once; if a
// step outgrew the current block, reset() replaces the blocks with one big enough, so from the
// second step on a step allocates nothing from the system.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace transduce {

class Arena {
 public:
  explicit Arena(size_t initial_bytes = size_t{1} << 20);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  Tensor alloc(const Shape& shape, DType dtype = DType::F32);
  Tensor zeros(const Shape& shape, DType dtype = DType::F32);
  void reset();

  size_t used() const { return used_total_; }
  size_t peak() const { return peak_; }
  size_t capacity() const;
  // How many times the arena asked the system for memory since it was made.
  size_t system_allocations() const { return system_allocations_; }

 private:
  struct Block {
    std::unique_ptr<char, void (*)(void*)> data;
    size_t size;
    size_t offset;
  };
  void add_block(size_t min_bytes);

  std::vector<Block> blocks_;
  size_t used_total_ = 0;
  size_t peak_ = 0;
  size_t system_allocations_ = 0;
  size_t consolidations_ = 0;
};

}  // namespace transduce
