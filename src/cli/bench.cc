// `transduce bench train`: the training-step benchmark of ../shared/BENCHMARKS.md.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench/train_bench.h"
#include "cli/commands.h"
#include "cli/model_flags.h"

namespace transduce::cli {

namespace {

struct TrainBenchFlags {
  ModelFlags model;
  std::optional<int> steps;
  int batch = 164;
  int src_len = 25;
  int tgt_len = 25;
  bool json = false;
};

void run_train(const TrainBenchFlags& f) {
  const ModelConfig c = f.model.resolve();
  bench::TrainBenchOptions o;
  o.batch_sentences = f.batch;
  o.src_len = f.src_len;
  o.tgt_len = f.tgt_len;
  // BENCHMARKS.md: the median of 10 steps for tiny, 5 for base (and big).
  o.timed_steps = f.steps ? *f.steps : (f.model.preset == "tiny" ? 10 : 5);
  const bench::TrainBenchResult r = bench::run_train_bench(c, o);

  if (f.json) {
    nlohmann::json j;
    j["benchmark"] = "train";
    j["preset"] = f.model.preset;
    j["config"] = c;
    j["batch_sentences"] = o.batch_sentences;
    j["src_len"] = o.src_len;
    j["tgt_len"] = o.tgt_len;
    j["src_tokens"] = r.src_tokens;
    j["tgt_tokens"] = r.tgt_tokens;
    j["threads"] = r.threads;
    j["warmup_steps"] = o.warmup_steps;
    j["timed_steps"] = o.timed_steps;
    j["step_seconds"] = r.step_seconds;
    j["median_step_seconds"] = r.median_seconds;
    j["min_step_seconds"] = r.min_seconds;
    j["max_step_seconds"] = r.max_seconds;
    j["tokens_per_second"] = r.tokens_per_second;
    j["model_gflop_per_step"] = r.flops_per_step / 1e9;
    j["model_gflops"] = r.model_gflops;
    j["sgemm_n"] = o.sgemm_n;
    j["sgemm_gflops"] = r.sgemm_gflops;
    j["mfu"] = r.mfu;
    j["last_loss"] = r.last_loss;
    j["arena_peak_bytes"] = r.arena_peak_bytes;
    j["timed_system_allocations"] = r.timed_system_allocations;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print(
      "bench train: preset {} (N {}, d_model {}, d_ff {}, h {}, d_k {}, d_v {}), vocab {}, "
      "{} x ({} + {}) tokens, {} threads\n",
      f.model.preset, c.layers, c.d_model, c.d_ff, c.heads, c.d_k, c.d_v, c.vocab_size,
      o.batch_sentences, o.src_len, o.tgt_len, r.threads);
  fmt::print("step time  median {:.3f} s  (min {:.3f}, max {:.3f} over {} steps, {} warm-up)\n",
             r.median_seconds, r.min_seconds, r.max_seconds, o.timed_steps, o.warmup_steps);
  fmt::print("throughput {:.0f} tokens/s (source + target, {} per step)\n", r.tokens_per_second,
             r.src_tokens + r.tgt_tokens);
  fmt::print("model      {:.1f} GFLOP/s  ({:.1f} GFLOP per step)\n", r.model_gflops,
             r.flops_per_step / 1e9);
  fmt::print("sgemm      {:.1f} GFLOP/s  ({}^3, same threads)\n", r.sgemm_gflops, o.sgemm_n);
  fmt::print("MFU        {:.2f}\n", r.mfu);
  fmt::print("loss       {:.4f} (last step, label-smoothed, per target token)\n", r.last_loss);
  fmt::print("memory     arena peak {:.1f} MB, {} system allocations during timed steps\n",
             static_cast<double>(r.arena_peak_bytes) / 1e6, r.timed_system_allocations);
}

}  // namespace

void register_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "measure speed on fixed synthetic workloads");
  bench->require_subcommand(1);

  auto f = std::make_shared<TrainBenchFlags>();
  f->model.preset = "tiny";
  f->model.vocab = 8000;  // BENCHMARKS.md's vocabulary, not the preset's
  CLI::App* train = bench->add_subcommand(
      "train", "time full training steps (../shared/BENCHMARKS.md); threads from --threads");
  f->model.add_to(*train);
  train->add_option("--steps", f->steps, "timed steps (default: 10 for tiny, 5 otherwise)")
      ->check(CLI::PositiveNumber);
  train->add_option("--batch", f->batch, "sentence pairs per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--src-len", f->src_len, "source tokens per sentence")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--tgt-len", f->tgt_len, "target tokens per sentence (ending in EOS)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_flag("--json", f->json, "print one JSON object instead of text");
  train->callback([f] { run_train(*f); });
}

}  // namespace transduce::cli
