// `transduce bench train` and `transduce bench translate`: the training-step and decoding
// benchmarks of ../shared/BENCHMARKS.md (`bench serve` lives in bench_serve.cc).
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/train_bench.h"
#include "bench/translate_bench.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "cli/version.h"
#include "decode/search_options.h"
#include "model/precision.h"
#include "ops/ops.h"

namespace transduce::cli {

namespace {

struct TrainBenchFlags {
  ModelChoice model;
  std::optional<int> steps;
  int batch = 164;
  int accumulate = 1;
  int src_len = 25;
  int tgt_len = 25;
  std::string precision = "fp32";
  bool json = false;
};

void run_train(const TrainBenchFlags& f) {
  const ModelConfig c = resolve_model(f.model);
  bench::TrainBenchOptions o;
  o.batch_sentences = f.batch;
  o.accumulate = f.accumulate;
  o.src_len = f.src_len;
  o.tgt_len = f.tgt_len;
  o.precision = parse_precision(f.precision);
  // BENCHMARKS.md: the median of 10 steps for tiny, 5 for base (and big).
  o.timed_steps = f.steps ? *f.steps : (f.model.preset == "tiny" ? 10 : 5);
  const bench::TrainBenchResult r = bench::run_train_bench(c, o);
  const std::string gemms = gemm_description(o.precision);
  // The kernel oneDNN picked for the feed-forward layer's product of a benchmark step.
  const std::string bf16_kernel =
      o.precision == Precision::BF16
          ? ops::bf16_gemm_kernel(r.tgt_tokens / o.accumulate, c.d_ff, c.d_model)
          : "";

  if (f.json) {
    nlohmann::json j;
    j["benchmark"] = "train";
    j["preset"] = f.model.preset;
    j["config"] = c;
    j["batch_sentences"] = o.batch_sentences;
    j["accumulate"] = o.accumulate;
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
    j["precision"] = precision_name(o.precision);
    j["commit"] = build_commit();
    j["gemms"] = gemms;
    j["fp32_gemm_library"] = ops::fp32_gemm_library();
    if (o.precision == Precision::BF16) {
      j["bf16_gemm_gflops"] = r.bf16_gemm_gflops;
      j["bf16_gemm_kernel"] = bf16_kernel;
    }
    j["mfu"] = r.mfu;
    j["first_loss"] = r.first_loss;
    j["last_loss"] = r.last_loss;
    j["products_seconds_per_step"] = r.products_seconds_per_step;
    j["outside_products_seconds_per_step"] = r.outside_products_seconds_per_step;
    for (const auto& [name, seconds] : r.phase_seconds_per_step)
      j["phase_seconds_per_step"][name] = seconds;
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
  fmt::print("GEMMs      {}{}\n", gemms,
             bf16_kernel.empty() ? "" : fmt::format(", kernel {}", bf16_kernel));
  fmt::print("sgemm      {:.1f} GFLOP/s  ({}^3, same threads)\n", r.sgemm_gflops, o.sgemm_n);
  if (o.precision == Precision::BF16)
    fmt::print("bf16 gemm  {:.1f} GFLOP/s  ({}^3, same threads)\n", r.bf16_gemm_gflops, o.sgemm_n);
  fmt::print("MFU        {:.2f} (of the {} GEMM rate)\n", r.mfu, precision_name(o.precision));
  fmt::print("products   {:.3f} s a step, {:.3f} s outside them (means over the timed steps)\n",
             r.products_seconds_per_step, r.outside_products_seconds_per_step);
  std::string split;
  for (const auto& [name, seconds] : r.phase_seconds_per_step)
    split += fmt::format("{}{} {:.3f}", split.empty() ? "" : ", ", name, seconds);
  fmt::print("phases     {} (s a step)\n", split);
  fmt::print("loss       {:.4f} (last step, label-smoothed, per target token)\n", r.last_loss);
  fmt::print("memory     arena peak {:.1f} MB, {} system allocations during timed steps\n",
             static_cast<double>(r.arena_peak_bytes) / 1e6, r.timed_system_allocations);
}

struct TranslateBenchFlags {
  ModelChoice model;
  SearchOptions search;  // beam, alpha, max_len_b
  bool greedy_only = false;
  bool beam_only = false;
  int sentences = bench::kDecodeSentences;
  int batch = 100;
  int min_words = 15, max_words = 25;
  uint64_t init_seed = 1;
  std::string compute_type = "fp32";
  bool phases = false;
  bool json = false;
};

// The phases a decoding run's time is split into, in the order they are reported.
constexpr Phase kDecodePhases[] = {
    Phase::kEncode,           Phase::kProducts,   Phase::kAttention, Phase::kDecoderOther,
    Phase::kOutputProjection, Phase::kLogSoftmax, Phase::kSearch};

nlohmann::json to_json(const bench::TranslateBenchResult& r, float alpha) {
  nlohmann::json j;
  j["search"] = r.search;
  j["beam"] = r.beam;
  if (r.search == "beam") j["alpha"] = alpha;
  j["batches"] = r.batches;
  j["batch_seconds"] = r.batch_seconds;
  j["seconds"] = r.seconds;
  j["output_tokens"] = r.output_tokens;
  j["sentences_per_second"] = r.sentences_per_second;
  j["output_tokens_per_second"] = r.tokens_per_second;
  j["steps"] = r.steps;
  nlohmann::json phases;
  for (const Phase p : kDecodePhases) phases[std::string(phase_name(p))] = r.phases[p];
  j["phase_seconds"] = phases;
  return j;
}

// Milliseconds per decoder step of each phase; the encoder's per batch.
void print_phases(const bench::TranslateBenchResult& r) {
  const double batches = static_cast<double>(r.batches), steps = static_cast<double>(r.steps);
  fmt::print("  {} decoder steps; per step, in ms (the encoder: per batch):", r.steps);
  for (const Phase p : kDecodePhases) {
    const double per = r.phases[p] / (p == Phase::kEncode ? batches : steps) * 1e3;
    fmt::print(" {} {:.3f} ({:.0f}%)", phase_name(p), per, 100 * r.phases[p] / r.seconds);
  }
  fmt::print("\n");
}

void run_translate(const TranslateBenchFlags& f) {
  const ModelConfig c = resolve_model(f.model);
  Transformer model(c);
  model.init_parameters(f.init_seed);
  model.release_gradients();
  const Precision compute = parse_compute_type(f.compute_type);
  model.set_precision(compute);
  model.pack_for_inference();
  // What the GEMMs ran on: oneDNN's kernel for a feed-forward product of a batch, for int8 or the
  // packed weights of fp32 and bf16 (whose other products, the attention's, are the library's).
  std::string gemms = gemm_description(compute);
  const ops::PackedWeights& fc1 = model.encoder.layers.front()->ffn.fc1.weight.packed;
  if (compute == Precision::INT8)
    gemms += fmt::format(", kernel {}", ops::int8_gemm_kernel(2048, c.d_ff, c.d_model));
  else if (fc1.defined())
    gemms += fmt::format("; weights packed for oneDNN {}, kernel {}", ops::onednn_version(),
                         ops::packed_gemm_kernel(2048, fc1));
  bench::TranslateBenchOptions o;
  o.sentences = f.sentences;
  o.batch_sentences = f.batch;
  o.search = f.search;
  o.min_words = f.min_words;
  o.max_words = f.max_words;

  std::vector<bench::TranslateBenchResult> runs;
  if (!f.greedy_only) runs.push_back(bench::run_translate_bench(model, o));
  if (!f.beam_only) {
    o.greedy = true;
    runs.push_back(bench::run_translate_bench(model, o));
  }
  const bench::TranslateBenchResult& first = runs.front();

  if (f.json) {
    nlohmann::json j;
    j["benchmark"] = "translate";
    j["preset"] = f.model.preset;
    j["config"] = c;
    j["init_seed"] = f.init_seed;
    j["compute_type"] = f.compute_type;
    j["commit"] = build_commit();
    j["gemms"] = gemms;
    j["sentences"] = first.sentences;
    j["batch_sentences"] = o.batch_sentences;
    j["source_words"] = first.source_words;
    j["source_tokens"] = first.source_tokens;
    j["threads"] = first.threads;
    j["warmup_batches"] = o.warmup_batches;
    j["max_len_a"] = o.search.max_len_a;
    j["max_len_b"] = o.search.max_len_b;
    j["runs"] = nlohmann::json::array();
    for (const auto& r : runs) j["runs"].push_back(to_json(r, o.search.alpha));
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print(
      "bench translate: preset {} (N {}, d_model {}, d_ff {}, h {}, d_k {}, d_v {}), vocab {}, "
      "{} threads\n",
      f.model.preset, c.layers, c.d_model, c.d_ff, c.heads, c.d_k, c.d_v, c.vocab_size,
      first.threads);
  fmt::print("GEMMs      {}\n", gemms);
  fmt::print(
      "workload   {} sentences, {} source tokens ({} words + EOS), batches of {} longest first, "
      "forced length: {} output tokens (EOS included)\n",
      first.sentences, first.source_tokens, first.source_words, o.batch_sentences,
      first.output_tokens);
  for (const auto& r : runs) {
    const std::string name = r.search == "greedy"
                                 ? "greedy (beam 1)"
                                 : fmt::format("beam {} (alpha {:g})", r.beam, o.search.alpha);
    fmt::print(
        "{:<18} {:8.2f} sentences/s  {:8.1f} output tokens/s  {:8.3f} s  ({} batches, {} "
        "warm-up)\n",
        name, r.sentences_per_second, r.tokens_per_second, r.seconds, r.batches, o.warmup_batches);
    if (f.phases) print_phases(r);
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "measure speed on fixed synthetic workloads");
  bench->require_subcommand(1);

  auto f = std::make_shared<TrainBenchFlags>();
  f->model.preset = "tiny";
  f->model.vocab_size = 8000;  // BENCHMARKS.md's vocabulary, not the preset's
  CLI::App* train = bench->add_subcommand(
      "train", "time full training steps (../shared/BENCHMARKS.md); threads from --threads");
  add_model_flags(*train, f->model);
  train->add_option("--steps", f->steps, "timed steps (default: 10 for tiny, 5 otherwise)")
      ->check(CLI::PositiveNumber);
  train->add_option("--batch-sentences", f->batch, "sentence pairs per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train
      ->add_option("--accum", f->accumulate,
                   "run the batch as this many slices, gradients summed before one update")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--src-len", f->src_len, "source tokens per sentence")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--tgt-len", f->tgt_len, "target tokens per sentence (ending in EOS)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--compute-type", f->precision, "fp32 | bf16: the GEMMs' inputs (as train's)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  train->add_flag("--json", f->json, "print one JSON object instead of text");
  train->callback([f] { run_train(*f); });

  auto t = std::make_shared<TranslateBenchFlags>();
  t->model.preset = "tiny";
  t->model.vocab_size = 8000;  // BENCHMARKS.md's vocabulary, not the preset's
  CLI::App* translate = bench->add_subcommand(
      "translate",
      "time forced-length decoding, beam search and greedy (../shared/BENCHMARKS.md); threads "
      "from --threads");
  add_model_flags(*translate, t->model);
  add_option_flags(*translate, search_option_specs(), t->search, {"beam", "alpha", "max_len_b"});
  CLI::Option* greedy_only = translate->add_flag("--greedy,--greedy-only", t->greedy_only,
                                                 "run only greedy search (beam 1)");
  CLI::Option* beam_only = translate->add_flag("--beam-only", t->beam_only, "run only beam search");
  greedy_only->excludes(beam_only);
  translate->add_option("--sentences", t->sentences, "sources to translate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  translate->add_option("--batch-sentences", t->batch, "sentences per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  translate->add_option("--min-words", t->min_words, "shortest source, in words")
      ->capture_default_str();
  translate->add_option("--max-words", t->max_words, "longest source, in words")
      ->capture_default_str();
  translate->add_option("--seed", t->init_seed, "seed of the random weights")
      ->capture_default_str();
  add_compute_type(*translate, t->compute_type);
  translate->add_flag("--phases", t->phases,
                      "also print where the time went, per decoder step and phase (the JSON "
                      "always has it)");
  translate->add_flag("--json", t->json, "print one JSON object instead of text");
  translate->callback([t] { run_translate(*t); });

  register_bench_serve(*bench);
}

}  // namespace transduce::cli
