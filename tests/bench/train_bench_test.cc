#include "bench/train_bench.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"

namespace transduce::bench {
namespace {

ModelConfig bench_config(const char* preset) {
  ModelConfig c = ModelConfig::preset(preset);
  c.vocab_size = 8000;
  return c;
}

// A model small enough to run whole benchmark steps in a test.
ModelConfig small_config() {
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 1;
  c.d_model = 16;
  c.d_ff = 32;
  c.heads = 2;
  c.d_k = c.d_v = 8;
  c.vocab_size = 50;
  return c;
}

TEST(TrainBench, FlopsMatchBenchmarksMd) {
  EXPECT_NEAR(model_flops_per_step(bench_config("tiny"), 164, 25, 25), 188.6e9, 0.05e9);
  EXPECT_NEAR(model_flops_per_step(bench_config("base"), 164, 25, 25), 1195.5e9, 0.05e9);
}

TEST(TrainBench, FlopsOfASmallCaseByHand) {
  // N 1, d 2, d_ff 4, h 1 (d_k = d_v = 2), V 10, B 1, Ls 2, Lt 3: S = 2, T = 3.
  //   S N (4d^2 + 2 d d_ff) = 2 (16 + 16) = 64
  //   T N (6d^2 + 2 d d_ff) = 3 (24 + 16) = 120
  //   S N 2d^2 = 2 * 8 = 16
  //   T d V = 3 * 2 * 10 = 60
  //   6 (64 + 120 + 16 + 60) = 1560;  12 d B N (4 + 9 + 6) = 24 * 19 = 456;  total 2016.
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 1;
  c.d_model = 2;
  c.d_ff = 4;
  c.heads = 1;
  c.d_k = c.d_v = 2;
  c.vocab_size = 10;
  EXPECT_DOUBLE_EQ(model_flops_per_step(c, 1, 2, 3), 2016.0);
}

TEST(TrainBench, FlopsFollowDkAndDv) {
  // Table 3 row (B)-style: h d_k != d_model changes only Q/K work; doubling d_v only V/O work.
  ModelConfig c = bench_config("tiny");
  const double base = model_flops_per_step(c, 164, 25, 25);
  c.d_k = 32;  // h d_k = 128 instead of 256
  const double smaller = model_flops_per_step(c, 164, 25, 25);
  // Q and K lose d * 128 MACs per token each: encoder 2, decoder self 2 + cross-Q 1 per target
  // token, cross-K 1 per source token; scores lose 128 per query-key pair.
  const double s = 4100, t = 4100, n = 3, d = 256;
  const double expected_drop = 6 * (s * n * 2 * d * 128 + t * n * 3 * d * 128 + s * n * d * 128) +
                               6 * 164.0 * n * 128 * (625 + 625 + 625);
  EXPECT_NEAR(base - smaller, expected_drop, 1.0);
}

TEST(TrainBench, BatchIsBenchmarksMdShape) {
  const Batch b = make_benchmark_batch();
  ASSERT_EQ(b.src.shape(), Shape({164, 25}));
  ASSERT_EQ(b.tgt_in.shape(), Shape({164, 25}));
  ASSERT_EQ(b.tgt_out.shape(), Shape({164, 25}));
  EXPECT_EQ(b.src.numel(), 4100);
  EXPECT_EQ(b.tgt_out.numel(), 4100);
  for (int64_t i = 0; i < b.src.numel(); ++i) {
    EXPECT_GE(b.src.i32()[i], 4);
    EXPECT_LE(b.src.i32()[i], 7999);
  }
  for (int s = 0; s < 164; ++s) {
    const int32_t* in = b.tgt_in.i32() + s * 25;
    const int32_t* out = b.tgt_out.i32() + s * 25;
    EXPECT_EQ(in[0], 1);    // BOS
    EXPECT_EQ(out[24], 2);  // EOS
    for (int t = 1; t < 25; ++t) {
      EXPECT_EQ(in[t], out[t - 1]);
      EXPECT_GE(in[t], 4);
      EXPECT_LE(in[t], 7999);
    }
    for (int t = 0; t < 24; ++t) {
      EXPECT_GE(out[t], 4);
      EXPECT_LE(out[t], 7999);
    }
  }
}

TEST(TrainBench, BatchDrawsFromOneSplitMixStreamInDocumentedOrder) {
  // Sentence 0's source tokens are the first 25 numbers of splitmix64(1), then its 24 target words.
  SplitMix64 rng(1);
  const Batch b = make_benchmark_batch();
  for (int t = 0; t < 25; ++t) EXPECT_EQ(b.src.i32()[t], rng.randint(4, 7999));
  for (int t = 0; t < 24; ++t) EXPECT_EQ(b.tgt_out.i32()[t], rng.randint(4, 7999));
  EXPECT_EQ(b.src.i32()[25], rng.randint(4, 7999));  // sentence 1 follows
  // Deterministic: a second call gives the same ids.
  const Batch again = make_benchmark_batch();
  for (int64_t i = 0; i < b.src.numel(); ++i) ASSERT_EQ(b.src.i32()[i], again.src.i32()[i]);
}

// Four sentences of five tokens a side, and a small GEMM for the rate: a run of a second or so.
TrainBenchOptions small_run(int timed_steps) {
  TrainBenchOptions o;
  o.batch_sentences = 4;
  o.src_len = 5;
  o.tgt_len = 5;
  o.timed_steps = timed_steps;
  o.sgemm_n = 64;
  o.sgemm_repeats = 2;
  return o;
}

TEST(TrainBench, SmallRunCompletesWithoutTimedAllocations) {
  ModelConfig c = small_config();
  TrainBenchOptions o = small_run(3);
  const TrainBenchResult r = run_train_bench(c, o);
  EXPECT_EQ(r.src_tokens, 20);
  EXPECT_EQ(r.tgt_tokens, 20);
  EXPECT_EQ(r.step_seconds.size(), 3u);
  EXPECT_TRUE(std::isfinite(r.last_loss));
  EXPECT_GT(r.last_loss, 0.0);
  // The first step's loss is at the initial weights: the same however many steps follow, and not
  // the last one's.
  EXPECT_NE(r.first_loss, r.last_loss);
  o.timed_steps = 1;
  EXPECT_EQ(run_train_bench(c, o).first_loss, r.first_loss);
  EXPECT_EQ(r.timed_system_allocations, 0u);
  EXPECT_GT(r.arena_peak_bytes, 0u);
  EXPECT_GT(r.median_seconds, 0.0);
  EXPECT_GT(r.sgemm_gflops, 0.0);
  EXPECT_TRUE(std::isfinite(r.mfu));
  EXPECT_DOUBLE_EQ(r.flops_per_step, model_flops_per_step(c, 4, 5, 5));
}

// The step by phase: each of training_phases() in order, then "other"; every phase runs in every
// step (attention through the fused kernels, the loss, Adam), and the phases do not overlap:
// what is left for "other" is not negative.
TEST(TrainBench, TheStepSplitsIntoPhasesThatEachRun) {
  ModelConfig c = small_config();
  const TrainBenchOptions o = small_run(2);
  const TrainBenchResult r = run_train_bench(c, o);
  const std::vector<Phase> phases = training_phases();
  ASSERT_EQ(r.phase_seconds_per_step.size(), phases.size() + 1);
  double claimed = 0;
  for (size_t i = 0; i < phases.size(); ++i) {
    EXPECT_EQ(r.phase_seconds_per_step[i].first, phase_name(phases[i]));
    EXPECT_GT(r.phase_seconds_per_step[i].second, 0.0) << r.phase_seconds_per_step[i].first;
    claimed += r.phase_seconds_per_step[i].second;
  }
  EXPECT_EQ(r.phase_seconds_per_step.back().first, "other");
  EXPECT_GE(r.phase_seconds_per_step.back().second, 0.0);
  EXPECT_LE(claimed, (r.step_seconds[0] + r.step_seconds[1]) / 2);
  EXPECT_DOUBLE_EQ(r.phase_seconds_per_step[0].second, r.products_seconds_per_step);
}

// Without dropout, three slices with summed gradients are the same updates as the whole batch:
// after five updates the losses agree to rounding, and differ from a run with other updates.
TEST(TrainBench, AccumulatedSlicesEqualTheWholeBatch) {
  ModelConfig c = small_config();
  c.dropout = c.attention_dropout = c.relu_dropout = 0.0f;
  TrainBenchOptions o;
  o.batch_sentences = 7;  // slices of 2, 2 and 3 sentences
  o.src_len = 5;
  o.tgt_len = 6;
  o.warmup = 10;
  o.timed_steps = 3;
  o.sgemm_n = 0;
  const double whole = run_train_bench(c, o).last_loss;
  o.accumulate = 3;
  const double sliced = run_train_bench(c, o).last_loss;
  EXPECT_NEAR(sliced, whole, 1e-5 * whole);
  o.timed_steps = 2;  // one update fewer: the loss must show it
  EXPECT_GT(std::abs(run_train_bench(c, o).last_loss - whole), 1e-3 * whole);
  o.accumulate = 8;
  EXPECT_ANY_THROW(run_train_bench(c, o));
}

TEST(TrainBench, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace transduce::bench
