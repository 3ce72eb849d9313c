// `transduce bench serve`: the service under a bounded load on loopback, with dynamic batching
// and with one request at a time, side by side (src/bench/serve_bench.h).
#include <unistd.h>

#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/serve_bench.h"
#include "cli/commands.h"
#include "cli/option_flags.h"
#include "cli/version.h"
#include "core/error.h"
#include "core/threads.h"
#include "decode/search_options.h"
#include "text/corpus.h"

namespace transduce::cli {

namespace {

struct ServeBenchFlags {
  std::string model_dir, input;
  bench::ServeBenchOptions options;
  std::string modes = "both";
  int workers = 1;
  bool json = false;
};

std::string this_binary() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) fail("cannot find this program's path (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

void run_bench_serve(ServeBenchFlags f) {
  bench::ServeBenchOptions& o = f.options;
  o.transduce = this_binary();
  o.model_dir = f.model_dir;
  for (std::string& line : read_lines(f.input))
    if (!line.empty()) o.sentences.push_back(std::move(line));
  if (o.sentences.empty()) fail("{}: no sentences", f.input);
  if (o.server_threads == 0) o.server_threads = num_threads();

  struct Mode {
    const char* name;
    std::vector<std::string> args;
  };
  std::vector<Mode> modes;
  if (f.modes == "both" || f.modes == "batched")
    modes.push_back({"dynamic batching", {"--workers", std::to_string(f.workers)}});
  if (f.modes == "both" || f.modes == "single")
    modes.push_back({"one request at a time", {"--batch-requests", "1", "--max-wait-ms", "0"}});
  std::vector<bench::ServeBenchResult> results;
  for (const Mode& m : modes) {
    o.serve_args = m.args;
    results.push_back(bench::run_serve_bench(o));
  }

  if (f.json) {
    nlohmann::json j = {{"benchmark", "serve"},
                        {"commit", build_commit()},
                        {"model", f.model_dir},
                        {"clients", o.clients},
                        {"requests_per_client", o.requests},
                        {"beam", o.search.beam},
                        {"server_threads", o.server_threads},
                        {"batching_workers", f.workers},
                        {"runs", nlohmann::json::array()}};
    for (size_t i = 0; i < modes.size(); ++i) {
      const bench::ServeBenchResult& r = results[i];
      j["runs"].push_back({{"mode", modes[i].name},
                           {"serve_args", modes[i].args},
                           {"requests", r.requests},
                           {"errors", r.errors},
                           {"seconds", r.seconds},
                           {"requests_per_second", r.requests_per_second},
                           {"p50_ms", r.p50_ms},
                           {"p95_ms", r.p95_ms},
                           {"p99_ms", r.p99_ms},
                           {"max_ms", r.max_ms},
                           {"batches", r.batches},
                           {"server_exit", r.server_exit}});
    }
    if (results.size() == 2)
      j["batching_speedup"] = results[0].requests_per_second / results[1].requests_per_second;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(
        "bench serve: {} clients x {} one-sentence requests, beam {}, server threads {}, "
        "batching workers {}\n",
        o.clients, o.requests, o.search.beam, o.server_threads, f.workers);
    for (size_t i = 0; i < modes.size(); ++i) {
      const bench::ServeBenchResult& r = results[i];
      fmt::print(
          "{:<22} {:8.1f} requests/s  p50 {:7.1f} ms  p95 {:7.1f} ms  p99 {:7.1f} ms  "
          "{} errors  {} batches  exit {}\n",
          modes[i].name, r.requests_per_second, r.p50_ms, r.p95_ms, r.p99_ms, r.errors, r.batches,
          r.server_exit);
      if (r.errors) fmt::print("  first error: {}\n", r.first_error);
    }
    if (results.size() == 2)
      fmt::print("dynamic batching / one at a time: {:.2f}x\n",
                 results[0].requests_per_second / results[1].requests_per_second);
  }
  for (const bench::ServeBenchResult& r : results)
    if (r.errors || r.server_exit != 0)
      fail("the service failed under load: {} errors, exit {}", r.errors, r.server_exit);
}

}  // namespace

void register_bench_serve(CLI::App& bench) {
  auto f = std::make_shared<ServeBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "serve",
      "load `transduce serve` on loopback: throughput and latency, with dynamic batching "
      "and one request at a time");
  cmd->add_option("-m,--model", f->model_dir, "model directory")->required();
  cmd->add_option("--input", f->input, "sentences to send, one a line")->required();
  cmd->add_option("--clients", f->options.clients, "concurrent connections")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--requests", f->options.requests, "requests per connection")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_option_flags(*cmd, search_option_specs(), f->options.search, {"beam"});
  cmd->add_option("--mode", f->modes, "both, batched or single")
      ->check(CLI::IsMember({"both", "batched", "single"}))
      ->capture_default_str();
  cmd->add_option("--workers", f->workers,
                  "the batching server's workers (serve --workers); one at a time is one worker")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print one JSON object instead of text");
  cmd->callback([f] { run_bench_serve(*f); });
}

}  // namespace transduce::cli
