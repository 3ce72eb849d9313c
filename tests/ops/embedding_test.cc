// Embedding lookup/scatter and positional tables against naive loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "ops/ops.h"
#include "support/gradcheck.h"

namespace transduce {
namespace {

using transduce::testing::random_tensor;

Tensor ids_of(const Shape& shape, const std::vector<int32_t>& v) {
  Tensor t = Tensor::empty(shape, DType::I32);
  for (int64_t i = 0; i < t.numel(); ++i) t.i32()[i] = v[static_cast<size_t>(i)];
  return t;
}

// The message of the transduce::Error that `f` throws ("" if it throws none).
template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OpsEmbedding, GatherScalesAndRepeatsRows) {
  SplitMix64 rng(61);
  const int64_t vocab = 5, d = 3;
  Tensor table = random_tensor({vocab, d}, rng);
  const std::vector<int32_t> ids = {4, 1, 4, 0};
  Tensor out = Tensor::empty({2, 2, d});
  ops::embedding_gather(table, ids_of({2, 2}, ids), 2.0f, out);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t j = 0; j < d; ++j)
      EXPECT_EQ(out.f32()[r * d + j], table.f32()[ids[size_t(r)] * d + j] * 2.0f)
          << "row " << r << " col " << j;
}

// An int8 model's rows (I8 with one scale per row): hand-worked values, q * row scale * scale.
TEST(OpsEmbedding, GatherOfInt8RowsScalesEachByItsRowScale) {
  Tensor table = Tensor::empty({3, 2}, DType::I8), scales = Tensor::empty({3});
  const int8_t q[] = {127, -64, 0, 1, -127, 3};
  std::copy(q, q + 6, table.i8());
  scales.f32()[0] = 0.5f;
  scales.f32()[1] = 2.0f;
  scales.f32()[2] = 0.25f;
  Tensor out = Tensor::empty({3, 2});
  ops::embedding_gather(table, ids_of({3}, {2, 0, 2}), 4.0f, out, scales);
  const std::vector<float> want = {-127.0f, 3.0f, 254.0f, -128.0f, -127.0f, 3.0f};
  EXPECT_EQ(std::vector<float>(out.f32(), out.f32() + 6), want);
  // Without its scales, or an F32 table with scales, it is refused.
  EXPECT_THROW(ops::embedding_gather(table, ids_of({3}, {0, 1, 2}), 1.0f, out), Error);
  EXPECT_THROW(
      ops::embedding_gather(Tensor::zeros({3, 2}), ids_of({3}, {0, 1, 2}), 1.0f, out, scales),
      Error);
}

TEST(OpsEmbedding, GatherOfAnIdOutsideTheTableThrowsNamingIdAndPosition) {
  Tensor table = Tensor::zeros({5, 3});
  Tensor out = Tensor::empty({4, 3});
  const std::string big = error_message([&] {
    ops::embedding_gather(table, ids_of({4}, {1, 2, 7, 0}), 1.0f, out);
  });
  ASSERT_FALSE(big.empty()) << "id 7 of a 5-row table did not throw transduce::Error";
  EXPECT_NE(big.find('7'), std::string::npos) << big;
  EXPECT_NE(big.find("position 2"), std::string::npos) << big;

  const std::string negative = error_message([&] {
    ops::embedding_gather(table, ids_of({4}, {0, -1, 0, 0}), 1.0f, out);
  });
  ASSERT_FALSE(negative.empty()) << "id -1 did not throw";
  EXPECT_NE(negative.find("-1"), std::string::npos) << negative;
  EXPECT_NE(negative.find("position 1"), std::string::npos) << negative;

  // The boundary: vocab - 1 is fine, vocab is not.
  EXPECT_NO_THROW(ops::embedding_gather(table, ids_of({4}, {4, 4, 4, 4}), 1.0f, out));
  EXPECT_THROW(ops::embedding_gather(table, ids_of({4}, {4, 4, 4, 5}), 1.0f, out), Error);
}

TEST(OpsEmbedding, ScatterAddAccumulatesRepeatedIds) {
  SplitMix64 rng(62);
  const int64_t vocab = 4, d = 9;
  const std::vector<int32_t> ids = {2, 0, 2, 2, 3};
  Tensor dout = random_tensor({5, d}, rng);
  Tensor dtable = random_tensor({vocab, d}, rng);
  const Tensor before = dtable.clone();
  const float scale = 0.5f;
  ops::embedding_scatter_add(dout, ids_of({5}, ids), scale, dtable);
  std::vector<double> want(before.f32(), before.f32() + before.numel());
  for (size_t r = 0; r < ids.size(); ++r)
    for (int64_t j = 0; j < d; ++j)
      want[size_t(ids[r] * d + j)] += double{dout.f32()[int64_t(r) * d + j]} * scale;
  for (int64_t i = 0; i < dtable.numel(); ++i)
    EXPECT_NEAR(dtable.f32()[i], want[size_t(i)], 1e-6) << "row " << i / d << " col " << i % d;
  // Row 1 is never named: untouched.
  for (int64_t j = 0; j < d; ++j) EXPECT_EQ(dtable.f32()[d + j], before.f32()[d + j]);
}

TEST(OpsEmbedding, ScatterAddWithManyRowsAndWideTable) {
  SplitMix64 rng(63);
  const int64_t vocab = 7, d = 33, n = 200;
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = static_cast<int32_t>(rng.randint(0, vocab - 1));
  Tensor dout = random_tensor({n, d}, rng);
  Tensor dtable = Tensor::zeros({vocab, d});
  ops::embedding_scatter_add(dout, ids_of({n}, ids), 1.0f, dtable);
  std::vector<double> want(static_cast<size_t>(vocab * d), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j) want[size_t(ids[size_t(r)] * d + j)] += dout.f32()[r * d + j];
  for (int64_t i = 0; i < dtable.numel(); ++i) EXPECT_NEAR(dtable.f32()[i], want[size_t(i)], 1e-4);
}

TEST(OpsEmbedding, AddPositionsWithOffset) {
  SplitMix64 rng(64);
  const int64_t batch = 2, len = 3, d = 4, positions = 6, offset = 2;
  Tensor x = random_tensor({batch, len, d}, rng);
  Tensor table = random_tensor({positions, d}, rng);
  const Tensor x0 = x.clone();
  ops::add_positions(x, table, offset);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t l = 0; l < len; ++l)
      for (int64_t j = 0; j < d; ++j) {
        const int64_t i = (b * len + l) * d + j;
        EXPECT_EQ(x.f32()[i], x0.f32()[i] + table.f32()[(l + offset) * d + j])
            << "b " << b << " l " << l << " j " << j;
      }
}

TEST(OpsEmbedding, AddPositionsPastTheTableThrows) {
  Tensor table = Tensor::zeros({6, 4});
  Tensor x = Tensor::zeros({2, 3, 4});
  EXPECT_NO_THROW(ops::add_positions(x, table, 3));  // positions 3..5: the last ones
  const std::string msg = error_message([&] { ops::add_positions(x, table, 4); });
  ASSERT_FALSE(msg.empty()) << "positions 4..6 of a 6-row table did not throw";
  EXPECT_NE(msg.find('6'), std::string::npos) << msg;
  Tensor too_long = Tensor::zeros({1, 7, 4});
  EXPECT_THROW(ops::add_positions(too_long, table, 0), Error);
}

TEST(OpsEmbedding, PositionsGradAccumulatesPerPositionAcrossTheBatch) {
  SplitMix64 rng(65);
  const int64_t batch = 3, len = 4, d = 5, positions = 8, offset = 1;
  Tensor dx = random_tensor({batch, len, d}, rng);
  Tensor dtable = random_tensor({positions, d}, rng);
  const Tensor before = dtable.clone();
  ops::positions_grad(dx, dtable, offset);
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t j = 0; j < d; ++j) {
      double want = before.f32()[p * d + j];
      const int64_t l = p - offset;
      if (l >= 0 && l < len)
        for (int64_t b = 0; b < batch; ++b) want += dx.f32()[(b * len + l) * d + j];
      EXPECT_NEAR(dtable.f32()[p * d + j], want, 1e-5) << "position " << p << " col " << j;
    }
  EXPECT_THROW(ops::positions_grad(dx, dtable, 5), Error);  // 5 + 4 > 8
}

}  // namespace
}  // namespace transduce
