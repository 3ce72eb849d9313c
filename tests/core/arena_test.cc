#include <gtest/gtest.h>

#include "core/arena.h"

namespace transduce {
namespace {

TEST(Arena, SecondPassOfTheSameWorkAllocatesNothing) {
  Arena arena(1024);
  auto pass = [&] {
    for (int i = 0; i < 50; ++i) arena.alloc({100, 37});
  };
  pass();
  const size_t after_first = arena.system_allocations();
  EXPECT_GT(after_first, 1u);  // the first pass had to grow past 1 KiB
  arena.reset();
  const size_t after_reset = arena.system_allocations();
  pass();
  arena.reset();
  pass();
  EXPECT_EQ(arena.system_allocations(), after_reset);
  EXPECT_GE(arena.capacity(), arena.peak());
}

TEST(Arena, AllocationsAreAlignedAndDisjoint) {
  Arena arena(256);
  Tensor a = arena.alloc({3, 5});
  Tensor b = arena.alloc({7});
  Tensor c = arena.alloc({1000});
  for (const Tensor* t : {&a, &b, &c}) EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw()) % 64, 0u);
  for (int i = 0; i < 15; ++i) a.f32()[i] = 1.0f;
  for (int i = 0; i < 7; ++i) b.f32()[i] = 2.0f;
  for (int i = 0; i < 1000; ++i) c.f32()[i] = 3.0f;
  for (int i = 0; i < 15; ++i) EXPECT_EQ(a.f32()[i], 1.0f);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(b.f32()[i], 2.0f);
}

}  // namespace
}  // namespace transduce
