// The training-step benchmark of ../shared/BENCHMARKS.md: a fixed synthetic batch, the model FLOP
// count, the machine's fp32 GEMM rate, and a timed loop of full training steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/phase_clock.h"
#include "model/config.h"
#include "model/precision.h"
#include "model/transformer.h"

namespace transduce::bench {

// The benchmark batch: `batch_sentences` pairs of `src_len` source and `tgt_len` target tokens,
// no padding, ids from one SplitMix64(seed) stream. See train_bench.cc for the draw order.
Batch make_benchmark_batch(int batch_sentences = 164, int src_len = 25, int tgt_len = 25,
                           int vocab = 8000, uint64_t seed = 1);

// The GEMM rate (GFLOP/s) of ops::gemm on square n x n x n products with the current threads,
// with fp32 or bf16 inputs: one untimed warm-up, then the median of `repeats` timed products
// (2 n^3 flops each).
double measure_gemm_gflops(int64_t n = 2048, int repeats = 5, Precision p = Precision::FP32);
inline double measure_sgemm_gflops(int64_t n = 2048, int repeats = 5) {
  return measure_gemm_gflops(n, repeats, Precision::FP32);
}

// BENCHMARKS.md's GEMM FLOPs of one training step (forward + backward = 3x the forward's
// 2 flops per multiply-add). Written with h*d_k and h*d_v, which reduces to the document's formula
// when d_k = d_v = d_model / h.
double model_flops_per_step(const ModelConfig& config, int64_t batch, int64_t src_len,
                            int64_t tgt_len);

struct TrainBenchOptions {
  int batch_sentences = 164;
  // The step's batch as this many consecutive slices, their gradients summed before the one
  // update (a batch larger than activation memory allows, like `transduce train --accum`).
  int accumulate = 1;
  int src_len = 25;
  int tgt_len = 25;
  uint64_t data_seed = 1;     // the batch's token ids
  uint64_t init_seed = 1;     // the weights
  uint64_t dropout_seed = 1;  // slice k of step s uses dropout_seed + s * accumulate + k
  int warmup_steps = 2;       // untimed
  int timed_steps = 10;       // BENCHMARKS.md: 10 for tiny, 5 for base
  int warmup = 4000;          // the learning-rate schedule's warmup
  int64_t sgemm_n = 2048;     // 0 skips the GEMM measurements (mfu is then 0)
  int sgemm_repeats = 5;
  Precision precision = Precision::FP32;  // the GEMMs' inputs (model/precision.h)
};

struct TrainBenchResult {
  int threads = 0;
  int64_t src_tokens = 0;  // per step
  int64_t tgt_tokens = 0;
  std::vector<double> step_seconds;  // each timed step
  double median_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  double tokens_per_second = 0;  // (source + target) / median
  double flops_per_step = 0;
  double model_gflops = 0;      // flops_per_step / median / 1e9
  double sgemm_gflops = 0;      // fp32
  double bf16_gemm_gflops = 0;  // measured when the run is bf16
  double mfu = 0;               // model_gflops / the GEMM rate of the run's precision
  double first_loss = 0;        // the first step's, at the initial weights (before any update)
  double last_loss = 0;         // the last step's mean label-smoothed loss per target token
  size_t arena_peak_bytes = 0;
  size_t timed_system_allocations = 0;  // arena allocations from the system during timed steps
  // The timed steps' time in matrix products (core/phase_clock.h) and outside them (norms,
  // elementwise ops, attention's softmax, the loss, Adam).
  double products_seconds_per_step = 0;          // the mean over the timed steps
  double outside_products_seconds_per_step = 0;  // the mean step time less the products'
  // Where a step's time goes (training_phases, then "other"), means over the timed steps; "other"
  // is what no phase claims: norms, residual adds, dropout, the bias gradients, the embeddings.
  std::vector<std::pair<std::string, double>> phase_seconds_per_step;
};

// The phases a training step's time is split into, in the order reports list them.
std::vector<Phase> training_phases();

TrainBenchResult run_train_bench(const ModelConfig& config, const TrainBenchOptions& options);

double median(std::vector<double> values);

}  // namespace transduce::bench
