// Bump allocator for one step's activations. reset() frees everything at once but keeps the
// memory: the next step fills the same blocks in the same order, so from the second step on a
// step of the same shape asks the system for nothing, and touches no fresh pages. Blocks grow
// geometrically; pages past what a step uses are never touched, so they cost address space only.
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

  // A point to come back to: release(m) frees what was allocated after mark() returned m.
  struct Mark {
    size_t block, offset, used;
  };
  Mark mark() const { return {current_, blocks_[current_].offset, used_total_}; }
  void release(const Mark& m);

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
  size_t current_ = 0;  // the block allocations come from; later blocks are free
  size_t used_total_ = 0;
  size_t peak_ = 0;
  size_t system_allocations_ = 0;
};

}  // namespace transduce
