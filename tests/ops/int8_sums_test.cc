// ops::int8_sums, gemm_int8's exact sums on CPUs without int8 dot-product instructions, against an
// int64 loop: the whole int8 range (where AVX2's vpmaddubsw pair sums would saturate), a base
// model's and a vocabulary's shapes with row and column counts that leave remainders, at 1, 2 and
// 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "ops/cpu/int8_sums.h"

namespace transduce {
namespace {

// int8 values (-128..127), held in int16 as int8_sums reads them.
std::vector<int16_t> random_int8(int64_t count, SplitMix64& rng) {
  std::vector<int16_t> v(static_cast<size_t>(count));
  for (int16_t& x : v) x = static_cast<int16_t>(static_cast<int>(rng.next() % 256) - 128);
  return v;
}

std::vector<int64_t> reference(const std::vector<int16_t>& x, int64_t rows,
                               const std::vector<int16_t>& w, int64_t n, int64_t k) {
  std::vector<int64_t> out(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t t = 0; t < k; ++t) s += int64_t{x[i * k + t]} * w[j * k + t];
      out[static_cast<size_t>(i * n + j)] = s;
    }
  return out;
}

TEST(OpsInt8Sums, EqualAnInt64LoopOverTheWholeRange) {
  SplitMix64 rng(11);
  struct Shape {
    int64_t rows, n, k;
  };
  // d_model 512 into d_ff 2048 and back; a vocabulary of 6,003 from d_model 128; odd sizes.
  for (const Shape& sh :
       {Shape{37, 2048, 512}, Shape{5, 512, 2048}, Shape{13, 6003, 128}, Shape{1, 7, 3}}) {
    const std::vector<int16_t> x = random_int8(sh.rows * sh.k, rng);
    const std::vector<int16_t> w = random_int8(sh.n * sh.k, rng);
    const std::vector<int64_t> want = reference(x, sh.rows, w, sh.n, sh.k);
    for (int threads : {1, 2, 3}) {
      std::vector<int32_t> got(static_cast<size_t>(sh.rows * sh.n), -1);
      ops::int8_sums(x.data(), sh.rows, w.data(), sh.n, sh.k, got.data(), threads);
      int bad = 0;
      for (size_t i = 0; i < got.size() && bad < 5; ++i)
        if (got[i] != want[i]) {
          ADD_FAILURE() << sh.rows << " x " << sh.n << " x " << sh.k << ", " << threads
                        << " threads, element " << i << ": " << got[i] << " vs " << want[i];
          ++bad;
        }
    }
  }
}

// Rows of -128 against rows of -128 and of 127: the largest sums of each sign.
TEST(OpsInt8Sums, TheLargestSumsAreExact) {
  const int64_t k = 4096;
  const std::vector<int16_t> x(k, -128);
  std::vector<int16_t> w(2 * k, -128);
  std::fill(w.begin() + k, w.end(), 127);
  std::vector<int32_t> got(2);
  ops::int8_sums(x.data(), 1, w.data(), 2, k, got.data(), 1);
  EXPECT_EQ(got[0], 128 * 128 * k);
  EXPECT_EQ(got[1], -128 * 127 * k);
}

}  // namespace
}  // namespace transduce
