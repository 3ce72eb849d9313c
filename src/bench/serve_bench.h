// The service under load (issue: "Serve and show"): `transduce serve` started as its own process
// on a loopback port, then `clients` connections each sending `requests` one-sentence requests,
// one after another, as fast as answers come; throughput and latency percentiles, with dynamic
// batching and with one request at a time, side by side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "decode/search.h"

namespace transduce::bench {

struct ServeBenchOptions {
  std::string transduce;  // the binary that serves
  std::string model_dir;
  std::vector<std::string> sentences;  // request i sends sentences[i % size]
  int clients = 64;
  int requests = 20;       // per client
  SearchOptions search;    // what each request asks for: its beam
  int server_threads = 0;  // the server's --threads (0: all cores)
  // Arguments added to `serve` for this run, e.g. {"--batch-requests", "1"}.
  std::vector<std::string> serve_args;
};

struct ServeBenchResult {
  int64_t requests = 0, errors = 0;  // errors: no answer, or a status other than 200
  std::string first_error;
  double seconds = 0;  // from the first request sent to the last answer
  double requests_per_second = 0;
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  int64_t batches = 0;   // the server's count, from /health after the run
  int server_exit = -1;  // the server's exit status after SIGTERM (0 expected)
};

// Starts the server, warms it with one request per client, runs the load, stops the server with
// SIGTERM. Throws transduce::Error when the server does not start.
ServeBenchResult run_serve_bench(const ServeBenchOptions& options);

}  // namespace transduce::bench
