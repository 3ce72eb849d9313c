// Token-budget batching (section 5.1): coverage, budget, length grouping, determinism, tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/rng.h"
#include "text/special_ids.h"
#include "train/batcher.h"

namespace transduce {
namespace {

std::vector<int32_t> random_tokens(SplitMix64& rng, int64_t len) {
  std::vector<int32_t> v;
  for (int64_t t = 0; t < len; ++t) v.push_back(static_cast<int32_t>(rng.randint(4, 99)));
  return v;
}

// Translation-like pairs: source length 1..60, target length within 3 of it (clipped to 1..60).
std::vector<Example> correlated_data(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Example> data;
  for (int i = 0; i < n; ++i) {
    const int64_t s = rng.randint(1, 60);
    const int64_t t = std::clamp<int64_t>(s + rng.randint(-3, 3), 1, 60);
    data.push_back(Example{random_tokens(rng, s), random_tokens(rng, t)});
  }
  return data;
}

// Source and target lengths drawn independently from 1..60.
std::vector<Example> independent_data(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Example> data;
  for (int i = 0; i < n; ++i) {
    const int64_t s = rng.randint(1, 60), t = rng.randint(1, 60);
    data.push_back(Example{random_tokens(rng, s), random_tokens(rng, t)});
  }
  return data;
}

struct Extent {
  int64_t max_src = 0, max_tgt = 0, min_src = 1 << 30, min_tgt = 1 << 30;
};

Extent extent(const std::vector<Example>& data, const std::vector<int64_t>& batch) {
  Extent x;
  for (int64_t i : batch) {
    const Example& e = data[static_cast<size_t>(i)];
    x.max_src = std::max(x.max_src, Batcher::source_length(e));
    x.max_tgt = std::max(x.max_tgt, Batcher::target_length(e));
    x.min_src = std::min(x.min_src, Batcher::source_length(e));
    x.min_tgt = std::min(x.min_tgt, Batcher::target_length(e));
  }
  return x;
}

void expect_each_example_once(const std::vector<std::vector<int64_t>>& plan, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& batch : plan) {
    ASSERT_FALSE(batch.empty());
    for (int64_t i : batch) {
      ASSERT_GE(i, 0);
      ASSERT_LT(static_cast<size_t>(i), n);
      ++seen[static_cast<size_t>(i)];
    }
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "example " << i;
}

TEST(BatcherPlan, EveryExampleExactlyOncePerEpoch) {
  const std::vector<Example> a = correlated_data(3000, 7), b = independent_data(2500, 8);
  for (int64_t budget : {1000, 25000, 30}) {
    Batcher ba(&a, BatcherOptions{budget, 3}), bb(&b, BatcherOptions{budget, 3});
    for (int64_t epoch = 0; epoch < 4; ++epoch) {
      expect_each_example_once(ba.epoch_plan(epoch), a.size());
      expect_each_example_once(bb.epoch_plan(epoch), b.size());
    }
  }
}

TEST(BatcherPlan, BatchesRespectTheBudgetOnBothSides) {
  const std::vector<Example> data = independent_data(3000, 11);
  // At 40 tokens some examples (lengths up to 61) exceed the budget alone.
  for (int64_t budget : {40, 1000, 4096}) {
    Batcher batcher(&data, BatcherOptions{budget, 5});
    int64_t singles_over_budget = 0;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      for (const auto& batch : batcher.epoch_plan(epoch)) {
        const Extent x = extent(data, batch);
        const int64_t b = static_cast<int64_t>(batch.size());
        if (b == 1 && (x.max_src > budget || x.max_tgt > budget)) {
          ++singles_over_budget;
          continue;
        }
        EXPECT_LE(b * x.max_src, budget);
        EXPECT_LE(b * x.max_tgt, budget);
      }
    }
    if (budget == 40) {
      EXPECT_GT(singles_over_budget, 0);
    } else {
      EXPECT_EQ(singles_over_budget, 0);
    }
  }
}

// Mean over batches of the within-batch length spread (max - min), source and target.
std::pair<double, double> mean_spread(const std::vector<Example>& data,
                                      const std::vector<std::vector<int64_t>>& plan) {
  double s = 0, t = 0;
  for (const auto& batch : plan) {
    const Extent x = extent(data, batch);
    s += static_cast<double>(x.max_src - x.min_src);
    t += static_cast<double>(x.max_tgt - x.min_tgt);
  }
  return {s / static_cast<double>(plan.size()), t / static_cast<double>(plan.size())};
}

TEST(BatcherPlan, GroupsSimilarLengths) {
  const std::vector<Example> data = correlated_data(4000, 21);
  Batcher batcher(&data, BatcherOptions{1000, 9});
  const auto plan = batcher.epoch_plan(0);
  ASSERT_GT(plan.size(), 20u);

  // Random batches of the same sizes.
  std::vector<int64_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  SplitMix64 rng(99);
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(rng.next() % i)]);
  std::vector<std::vector<int64_t>> random_plan;
  size_t pos = 0;
  for (const auto& batch : plan) {
    random_plan.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(pos),
                             order.begin() + static_cast<std::ptrdiff_t>(pos + batch.size()));
    pos += batch.size();
  }

  const auto [grouped_src, grouped_tgt] = mean_spread(data, plan);
  const auto [random_src, random_tgt] = mean_spread(data, random_plan);
  EXPECT_LT(grouped_src, random_src / 4) << grouped_src << " vs " << random_src;
  EXPECT_LT(grouped_tgt, random_tgt / 4) << grouped_tgt << " vs " << random_tgt;
}

// Padded tokens on the fuller side as a fraction of the budget, lowest first.
std::vector<double> fills(const std::vector<Example>& data,
                          const std::vector<std::vector<int64_t>>& plan, int64_t budget) {
  std::vector<double> f;
  for (const auto& batch : plan) {
    const Extent x = extent(data, batch);
    f.push_back(
        static_cast<double>(static_cast<int64_t>(batch.size()) * std::max(x.max_src, x.max_tgt)) /
        static_cast<double>(budget));
  }
  std::sort(f.begin(), f.end());
  return f;
}

TEST(BatcherPlan, BatchesAreNearlyFull) {
  // Independent lengths too: the budget binds on the longer side of each pair, so a batch only
  // packs well when the longer sides are alike; grouping by target length alone would pad short
  // sources up to long ones and need about 1.5 times the batches of the bound below.
  const std::vector<std::vector<Example>> sets = {correlated_data(4000, 31),
                                                  independent_data(4000, 32)};
  for (const auto& data : sets) {
    for (int64_t budget : {1000, 4000}) {
      Batcher batcher(&data, BatcherOptions{budget, 13});
      const std::vector<double> f = fills(data, batcher.epoch_plan(2), budget);
      ASSERT_GT(f.size(), 10u);
      EXPECT_LE(f.back(), 1.0);
      // All but the two emptiest batches (the tail of the sorted order, a length boundary).
      double sum = 0;
      for (size_t i = 2; i < f.size(); ++i) sum += f[i];
      const double mean = sum / static_cast<double>(f.size() - 2);
      EXPECT_GT(mean, 0.9) << "budget " << budget;
      EXPECT_GT(f[2], 0.5) << "budget " << budget;
      // No plan needs fewer batches than sum_i max(source, target length) / budget.
      int64_t cost = 0;
      for (const Example& e : data)
        cost += std::max(Batcher::source_length(e), Batcher::target_length(e));
      const double bound = static_cast<double>(cost) / static_cast<double>(budget);
      EXPECT_LT(static_cast<double>(f.size()), 1.1 * bound + 1) << "budget " << budget;
    }
  }
}

TEST(BatcherPlan, DeterministicPerSeedAndEpoch) {
  const std::vector<Example> data = correlated_data(3000, 41);
  Batcher a(&data, BatcherOptions{1000, 17}), again(&data, BatcherOptions{1000, 17});
  Batcher other_seed(&data, BatcherOptions{1000, 18});
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    EXPECT_EQ(a.epoch_plan(epoch), again.epoch_plan(epoch));
    EXPECT_NE(a.epoch_plan(epoch), other_seed.epoch_plan(epoch));
  }
  EXPECT_NE(a.epoch_plan(0), a.epoch_plan(1));
  EXPECT_NE(a.epoch_plan(1), a.epoch_plan(2));
}

TEST(BatcherPlan, EpochsChangeOrderAndComposition) {
  const std::vector<Example> data = correlated_data(3000, 51);
  Batcher batcher(&data, BatcherOptions{1000, 1});
  const auto p0 = batcher.epoch_plan(0), p1 = batcher.epoch_plan(1);
  // The order of batches: where the batch holding example 0 sits, and the first batches' sizes.
  std::vector<size_t> sizes0, sizes1;
  for (const auto& b : p0) sizes0.push_back(b.size());
  for (const auto& b : p1) sizes1.push_back(b.size());
  EXPECT_NE(sizes0, sizes1);
  // Composition: equal-length pairs are shuffled between batches, so the sets differ.
  std::set<std::vector<int64_t>> sets0, sets1;
  for (auto b : p0) {
    std::sort(b.begin(), b.end());
    sets0.insert(b);
  }
  for (auto b : p1) {
    std::sort(b.begin(), b.end());
    sets1.insert(b);
  }
  EXPECT_NE(sets0, sets1);
}

TEST(BatcherPlan, OversizedExampleGetsItsOwnBatch) {
  std::vector<Example> data = {Example{{4, 5}, {6}}, Example{std::vector<int32_t>(20, 7), {8}},
                               Example{{9}, {10, 11}}};
  Batcher batcher(&data, BatcherOptions{8, 1});
  const auto plan = batcher.epoch_plan(0);
  expect_each_example_once(plan, data.size());
  bool alone = false;
  for (const auto& b : plan) {
    if (std::find(b.begin(), b.end(), 1) != b.end()) alone = b.size() == 1;
  }
  EXPECT_TRUE(alone);
  // The other two fit together: 2 * max(3, 3) = 6 <= 8.
  EXPECT_EQ(plan.size(), 2u);
}

std::vector<int32_t> row(const Tensor& t, int64_t r) {
  const int32_t* p = t.i32() + r * t.dim(1);
  return std::vector<int32_t>(p, p + t.dim(1));
}

TEST(BatcherMakeBatch, ExactTensors) {
  const std::vector<Example> data = {Example{{5, 6, 7}, {8, 9}}, Example{{10}, {11, 12, 13, 14}}};
  Batcher batcher(&data, BatcherOptions{100, 1});
  EXPECT_EQ(Batcher::source_length(data[0]), 4);
  EXPECT_EQ(Batcher::target_length(data[0]), 3);
  const Batch batch = batcher.make_batch({1, 0});
  ASSERT_EQ(batch.src.dtype(), DType::I32);
  ASSERT_EQ(batch.tgt_in.dtype(), DType::I32);
  ASSERT_EQ(batch.tgt_out.dtype(), DType::I32);
  ASSERT_EQ(batch.src.shape(), Shape({2, 4}));
  ASSERT_EQ(batch.tgt_in.shape(), Shape({2, 5}));
  ASSERT_EQ(batch.tgt_out.shape(), Shape({2, 5}));
  EXPECT_EQ(row(batch.src, 0), (std::vector<int32_t>{10, kEosId, kPadId, kPadId}));
  EXPECT_EQ(row(batch.src, 1), (std::vector<int32_t>{5, 6, 7, kEosId}));
  EXPECT_EQ(row(batch.tgt_in, 0), (std::vector<int32_t>{kBosId, 11, 12, 13, 14}));
  EXPECT_EQ(row(batch.tgt_in, 1), (std::vector<int32_t>{kBosId, 8, 9, kPadId, kPadId}));
  EXPECT_EQ(row(batch.tgt_out, 0), (std::vector<int32_t>{11, 12, 13, 14, kEosId}));
  EXPECT_EQ(row(batch.tgt_out, 1), (std::vector<int32_t>{8, 9, kEosId, kPadId, kPadId}));
  // Teacher forcing: the input is the output shifted right by one, within each real length.
  const int64_t real[2] = {5, 3};
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t t = 1; t < real[r]; ++t)
      EXPECT_EQ(row(batch.tgt_in, r)[static_cast<size_t>(t)],
                row(batch.tgt_out, r)[static_cast<size_t>(t - 1)]);
  }
}

TEST(BatcherMakeBatch, FromAPlanCoversEveryToken) {
  const std::vector<Example> data = independent_data(500, 61);
  Batcher batcher(&data, BatcherOptions{600, 2});
  int64_t src_tokens = 0, tgt_tokens = 0, expected_src = 0, expected_tgt = 0;
  for (const Example& e : data) {
    expected_src += Batcher::source_length(e);
    expected_tgt += Batcher::target_length(e);
  }
  for (const auto& indices : batcher.epoch_plan(0)) {
    const Batch b = batcher.make_batch(indices);
    EXPECT_LE(b.src.numel(), 600);
    EXPECT_LE(b.tgt_out.numel(), 600);
    for (int64_t k = 0; k < b.src.numel(); ++k) src_tokens += b.src.i32()[k] != kPadId;
    for (int64_t k = 0; k < b.tgt_out.numel(); ++k) tgt_tokens += b.tgt_out.i32()[k] != kPadId;
  }
  EXPECT_EQ(src_tokens, expected_src);
  EXPECT_EQ(tgt_tokens, expected_tgt);
}

TEST(BatcherOptionsCheck, BadOptionsThrow) {
  const std::vector<Example> data = correlated_data(10, 1);
  const std::vector<Example> empty;
  EXPECT_THROW(Batcher(&data, BatcherOptions{0, 1}), Error);
  EXPECT_THROW(Batcher(&data, BatcherOptions{-5, 1}), Error);
  EXPECT_THROW(Batcher(&empty, BatcherOptions{1000, 1}), Error);
  EXPECT_THROW(Batcher(nullptr, BatcherOptions{1000, 1}), Error);
  Batcher batcher(&data, BatcherOptions{1000, 1});
  EXPECT_THROW(batcher.make_batch({}), Error);
  EXPECT_THROW(batcher.make_batch({10}), Error);
  EXPECT_THROW(batcher.make_batch({-1}), Error);
}

}  // namespace
}  // namespace transduce
