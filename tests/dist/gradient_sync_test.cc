// GradientSync packs small gradients into buckets and sums large ones where they lie. A stand-in
// communicator that multiplies by the rank count (as if every rank held the same gradient) shows
// that every element comes back to its place exactly once.
#include "dist/gradient_sync.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/rng.h"
#include "support/identical_ranks.h"

namespace transduce {
namespace {

TEST(GradientSync, SumsEveryGradientOnceInBuckets) {
  // 100 + 300 floats fit a 512-float bucket together; 700 is summed in place in pieces of 512 and
  // 188; 200 + 200 + 100 share the next bucket; 600 goes in place as 512 and 88.
  const std::vector<int64_t> sizes = {100, 300, 700, 200, 200, 100, 600};
  std::vector<std::unique_ptr<Param>> owned;
  ParamList params;
  SplitMix64 rng(7);
  for (size_t i = 0; i < sizes.size(); ++i) {
    owned.push_back(std::make_unique<Param>("p" + std::to_string(i), Shape{sizes[i]}));
    for (int64_t j = 0; j < sizes[i]; ++j) owned.back()->grad.f32()[j] = rng.uniform(-1, 1);
    params.push_back(owned.back().get());
  }
  std::vector<std::vector<float>> before;
  for (Param* p : params) before.emplace_back(p->grad.f32(), p->grad.f32() + p->grad.numel());

  testing::IdenticalRanks comm(3);
  GradientSync sync(params, comm, /*bucket_bytes=*/512 * sizeof(float));
  EXPECT_EQ(sync.calls_per_sum(), 6);
  sync.sum();
  EXPECT_EQ(comm.sizes, (std::vector<int64_t>{400, 512, 188, 500, 512, 88}));
  for (size_t i = 0; i < params.size(); ++i)
    for (int64_t j = 0; j < sizes[i]; ++j)
      ASSERT_EQ(params[i]->grad.f32()[j], 3.0f * before[i][static_cast<size_t>(j)])
          << params[i]->name << "[" << j << "]";
}

TEST(GradientSync, DigestTellsWeightsApart) {
  Param a("a", Shape{5}), b("b", Shape{3});
  for (int i = 0; i < 5; ++i) a.value.f32()[i] = 0.5f * i;
  const ParamList params = {&a, &b};
  const uint64_t digest = parameters_digest(params);
  EXPECT_EQ(parameters_digest(params), digest);
  b.value.f32()[2] = 1e-30f;  // one element, far below any printed precision
  EXPECT_NE(parameters_digest(params), digest);
  b.value.f32()[2] = 0.0f;
  EXPECT_EQ(parameters_digest(params), digest);
  std::swap(a.value.f32()[0], a.value.f32()[1]);  // same values, other places
  EXPECT_NE(parameters_digest(params), digest);
}

}  // namespace
}  // namespace transduce
