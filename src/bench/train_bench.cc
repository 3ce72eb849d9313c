#include "bench/train_bench.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/arena.h"
#include "core/error.h"
#include "core/phase_clock.h"
#include "core/rng.h"
#include "core/threads.h"
#include "model/context.h"
#include "ops/ops.h"
#include "train/adam.h"

namespace transduce::bench {

namespace {

constexpr int32_t kBos = 1;
constexpr int32_t kEos = 2;
constexpr int32_t kFirstWord = 4;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// BENCHMARKS.md: "decoder input BOS + y[0:24], labels y ending in EOS". We read y as the target
// sentence of Lt tokens whose last token is EOS: y[0..Lt-2] are drawn, y[Lt-1] = EOS. Labels are y;
// the decoder input is BOS followed by y[0..Lt-2] (the slice y[0:Lt-1]), so tgt_in[t] =
// tgt_out[t-1] for t >= 1. Draw order, one SplitMix64(seed) stream, randint(4, V-1) each: for
// sentence b = 0..B-1, first its Ls source tokens, then its Lt-1 drawn target tokens. The source
// has no BOS/EOS: all Ls tokens are words.
Batch make_benchmark_batch(int batch_sentences, int src_len, int tgt_len, int vocab,
                           uint64_t seed) {
  if (batch_sentences <= 0 || src_len <= 0 || tgt_len <= 0)
    fail(
        "benchmark batch: sentences, source and target lengths must be positive, got {} x ({} + "
        "{})",
        batch_sentences, src_len, tgt_len);
  if (vocab <= kFirstWord)
    fail("benchmark batch: the vocabulary needs more than {} ids, got {}", kFirstWord, vocab);
  Batch batch;
  batch.src = Tensor::empty({batch_sentences, src_len}, DType::I32);
  batch.tgt_in = Tensor::empty({batch_sentences, tgt_len}, DType::I32);
  batch.tgt_out = Tensor::empty({batch_sentences, tgt_len}, DType::I32);
  SplitMix64 rng(seed);
  for (int b = 0; b < batch_sentences; ++b) {
    int32_t* src = batch.src.i32() + static_cast<int64_t>(b) * src_len;
    int32_t* in = batch.tgt_in.i32() + static_cast<int64_t>(b) * tgt_len;
    int32_t* out = batch.tgt_out.i32() + static_cast<int64_t>(b) * tgt_len;
    for (int t = 0; t < src_len; ++t)
      src[t] = static_cast<int32_t>(rng.randint(kFirstWord, vocab - 1));
    for (int t = 0; t < tgt_len - 1; ++t)
      out[t] = static_cast<int32_t>(rng.randint(kFirstWord, vocab - 1));
    out[tgt_len - 1] = kEos;
    in[0] = kBos;
    for (int t = 1; t < tgt_len; ++t) in[t] = out[t - 1];
  }
  return batch;
}

std::vector<Phase> training_phases() {
  return {Phase::kProducts, Phase::kAttention, Phase::kOutputProjection, Phase::kLoss,
          Phase::kUpdate};
}

double measure_gemm_gflops(int64_t n, int repeats, Precision p) {
  if (n <= 0 || repeats <= 0) fail("GEMM measurement: n and repeats must be positive");
  Tensor a = Tensor::empty({n, n}), b = Tensor::empty({n, n}), c = Tensor::zeros({n, n});
  SplitMix64 rng(7);
  for (int64_t i = 0; i < n * n; ++i) {
    a.f32()[i] = rng.uniform(-1.0f, 1.0f);
    b.f32()[i] = rng.uniform(-1.0f, 1.0f);
  }
  if (p == Precision::BF16) {
    Tensor a16 = Tensor::empty({n, n}, DType::BF16), b16 = Tensor::empty({n, n}, DType::BF16);
    ops::to_bf16(a, a16);
    ops::to_bf16(b, b16);
    a = a16;
    b = b16;
  }
  ops::gemm(a, false, b, false, c);  // warm-up: threads started, pages touched
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    ops::gemm(a, false, b, false, c);
    times.push_back(seconds_since(start));
  }
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return flops / median(times) / 1e9;
}

// Multiply-adds per step, times 2 flops, times 3 (forward, and backward's two products per GEMM):
//   encoder, per source token and layer: Q, K (d x h d_k) and V, O (d x h d_v), and the FFN;
//   decoder, per target token and layer: self-attention as above, cross-attention Q and O, FFN;
//   cross-attention K and V on the encoder output: per source token and decoder layer;
//   output projection: T x d x V;
//   attention scores (h d_k) and weighted values (h d_v) over Ls^2, Lt^2 (the full square, the
//   causal mask notwithstanding) and Ls Lt query-key pairs per sentence and layer.
// With h d_k = h d_v = d this is BENCHMARKS.md's
//   6 [S N (4d^2 + 2 d d_ff) + T N (6d^2 + 2 d d_ff) + S N 2d^2 + T d V] + 12 d B N (Ls^2 + Lt^2 +
//   Ls Lt).
double model_flops_per_step(const ModelConfig& c, int64_t batch, int64_t src_len, int64_t tgt_len) {
  const double d = c.d_model, ff = c.d_ff, n = c.layers, v = c.vocab_size;
  const double qk = static_cast<double>(c.heads) * c.d_k;  // h d_k
  const double vo = static_cast<double>(c.heads) * c.d_v;  // h d_v
  const double s = static_cast<double>(batch) * src_len;
  const double t = static_cast<double>(batch) * tgt_len;
  const double ls = static_cast<double>(src_len), lt = static_cast<double>(tgt_len);
  const double self_attention = 2 * d * qk + 2 * d * vo;  // Q, K, V, O
  const double ffn = 2 * d * ff;
  const double encoder = s * n * (self_attention + ffn);
  const double decoder = t * n * (self_attention + d * qk + d * vo + ffn);
  const double memory_kv = s * n * (d * qk + d * vo);
  const double output = t * d * v;
  const double attention =
      static_cast<double>(batch) * n * (qk + vo) * (ls * ls + lt * lt + ls * lt);
  return 6.0 * (encoder + decoder + memory_kv + output + attention);
}

TrainBenchResult run_train_bench(const ModelConfig& config, const TrainBenchOptions& o) {
  if (o.timed_steps <= 0) fail("bench train: --steps must be positive, got {}", o.timed_steps);
  if (o.warmup_steps < 1)
    fail("bench train: at least one warm-up step is needed to size the arena, got {}",
         o.warmup_steps);
  const int64_t longest = std::max(o.src_len, o.tgt_len);
  if (longest > config.max_positions)
    fail("bench train: length {} is over the model's {} positions", longest, config.max_positions);

  if (o.accumulate < 1 || o.accumulate > o.batch_sentences)
    fail("bench train: --accum must be between 1 and the batch's {} sentences, got {}",
         o.batch_sentences, o.accumulate);

  TrainBenchResult r;
  r.threads = num_threads();
  const Batch batch =
      make_benchmark_batch(o.batch_sentences, o.src_len, o.tgt_len, config.vocab_size, o.data_seed);
  r.src_tokens = batch.src.numel();
  r.tgt_tokens = batch.tgt_out.numel();
  r.flops_per_step = model_flops_per_step(config, o.batch_sentences, o.src_len, o.tgt_len);

  Transformer model(config);
  model.init_parameters(o.init_seed);
  model.set_precision(o.precision);
  Adam adam(model.parameters(), AdamOptions{0.9f, 0.98f, 1e-9f});
  Arena arena;

  // The slices of the batch, by sentences; the benchmark batch has no padding, so every target
  // token counts in the mean the gradient is of.
  std::vector<Batch> slices;
  for (int k = 0; k < o.accumulate; ++k) {
    const int64_t begin = int64_t{o.batch_sentences} * k / o.accumulate;
    const int64_t end = int64_t{o.batch_sentences} * (k + 1) / o.accumulate;
    slices.push_back(Batch{batch.src.slice_rows(begin, end), batch.tgt_in.slice_rows(begin, end),
                           batch.tgt_out.slice_rows(begin, end)});
  }
  const float grad_scale = 1.0f / static_cast<float>(batch.tgt_out.numel());

  auto step = [&]() {
    model.zero_grad();
    double loss = 0;
    int64_t tokens = 0;
    for (size_t k = 0; k < slices.size(); ++k) {
      arena.reset();
      Context ctx(arena, /*train=*/true,
                  o.dropout_seed + static_cast<uint64_t>(adam.steps()) * slices.size() + k);
      const ops::CrossEntropySums sums = model.train_step(ctx, slices[k], grad_scale);
      loss += sums.loss;
      tokens += sums.tokens;
    }
    adam.step(noam_learning_rate(adam.steps() + 1, config.d_model, o.warmup));
    return tokens > 0 ? loss / static_cast<double>(tokens) : 0.0;
  };

  for (int i = 0; i < o.warmup_steps; ++i) {
    r.last_loss = step();
    if (i == 0) r.first_loss = r.last_loss;
  }
  const size_t allocations_before = arena.system_allocations();
  PhaseTimes phases;
  {
    const PhaseRecording recording(phases);
    for (int i = 0; i < o.timed_steps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      r.last_loss = step();
      r.step_seconds.push_back(seconds_since(start));
    }
  }
  const double steps = static_cast<double>(o.timed_steps);
  const double mean_step =
      std::accumulate(r.step_seconds.begin(), r.step_seconds.end(), 0.0) / steps;
  r.products_seconds_per_step = phases[Phase::kProducts] / steps;
  r.outside_products_seconds_per_step = mean_step - r.products_seconds_per_step;
  double claimed = 0;
  for (const Phase p : training_phases()) {
    r.phase_seconds_per_step.emplace_back(phase_name(p), phases[p] / steps);
    claimed += phases[p] / steps;
  }
  r.phase_seconds_per_step.emplace_back("other", mean_step - claimed);
  r.timed_system_allocations = arena.system_allocations() - allocations_before;
  r.arena_peak_bytes = arena.peak();

  r.median_seconds = median(r.step_seconds);
  r.min_seconds = *std::min_element(r.step_seconds.begin(), r.step_seconds.end());
  r.max_seconds = *std::max_element(r.step_seconds.begin(), r.step_seconds.end());
  r.tokens_per_second = static_cast<double>(r.src_tokens + r.tgt_tokens) / r.median_seconds;
  r.model_gflops = r.flops_per_step / r.median_seconds / 1e9;
  // After the timed steps, so the GEMM runs with the machine in the state the steps left it in.
  if (o.sgemm_n > 0) {
    r.sgemm_gflops = measure_sgemm_gflops(o.sgemm_n, o.sgemm_repeats);
    if (o.precision == Precision::BF16)
      r.bf16_gemm_gflops = measure_gemm_gflops(o.sgemm_n, o.sgemm_repeats, Precision::BF16);
    r.mfu = r.model_gflops / (o.precision == Precision::BF16 ? r.bf16_gemm_gflops : r.sgemm_gflops);
  }
  return r;
}

}  // namespace transduce::bench
