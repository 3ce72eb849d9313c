#include "bench/serve_bench.h"

#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/child_process.h"
#include "core/error.h"
#include "decode/search_options.h"

namespace transduce::bench {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> sorted_ms, double p) {
  if (sorted_ms.empty()) return 0;
  const size_t i =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted_ms.size())));
  return sorted_ms[std::min(sorted_ms.size(), std::max<size_t>(i, 1)) - 1];
}

}  // namespace

ServeBenchResult run_serve_bench(const ServeBenchOptions& o) {
  if (o.sentences.empty()) fail("bench serve: no sentences to send");
  if (o.clients < 1 || o.requests < 1)
    fail("bench serve: --clients and --requests must be positive");
  std::vector<std::string> argv{o.transduce};
  if (o.server_threads > 0)
    argv.insert(argv.end(), {"--threads", std::to_string(o.server_threads)});
  argv.insert(argv.end(), {"serve", "-m", o.model_dir, "--port", "0", "--max-queue",
                           std::to_string(std::max(1024, o.clients * 2))});
  argv.insert(argv.end(), o.serve_args.begin(), o.serve_args.end());
  ChildProcess server(argv);
  if (!server.wait_for_output("listening on", std::chrono::minutes(5)))
    fail("bench serve: the server did not start: {}", server.output());
  std::smatch m;
  const std::string out = server.output();
  if (!std::regex_search(out, m, std::regex(R"(listening on http://[^:]+:(\d+)/)")))
    fail("bench serve: no port in the server's output: {}", out);
  const int port = std::stoi(m[1]);

  const int total = o.clients * o.requests;
  std::vector<double> latency_ms(static_cast<size_t>(total), -1);
  std::vector<int> status(static_cast<size_t>(total), 0);
  std::vector<std::string> failure(static_cast<size_t>(total));
  auto body = [&](int i) {
    nlohmann::json request = search_options_json(o.search, {"beam"});
    request["text"] = {o.sentences[static_cast<size_t>(i) % o.sentences.size()]};
    return request.dump();
  };
  // Each client: one untimed request (the server's first batches size its arenas), then its timed
  // ones once every client is ready, on a new connection: one left idle at the barrier could meet
  // the server's keep-alive timeout, and a request sent as it closes is lost.
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point start;
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client(("127.0.0.1"), port).Post("/v1/translate", body(c), "application/json");
      ++ready;
      while (!go) std::this_thread::yield();
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(600, 0);
      client.set_keep_alive(true);
      for (int r = 0; r < o.requests; ++r) {
        const int i = c * o.requests + r;
        const Clock::time_point sent = Clock::now();
        auto res = client.Post("/v1/translate", body(i), "application/json");
        latency_ms[static_cast<size_t>(i)] =
            std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
        status[static_cast<size_t>(i)] = res ? res->status : -1;
        if (!res)
          failure[static_cast<size_t>(i)] = "no answer: " + httplib::to_string(res.error());
        else if (res->status != 200)
          failure[static_cast<size_t>(i)] = res->body;
      }
    });
  }
  while (ready < o.clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = Clock::now();
  go = true;
  for (auto& t : clients) t.join();

  ServeBenchResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.requests = total;
  for (int i = 0; i < total; ++i) {
    if (status[static_cast<size_t>(i)] == 200) continue;
    if (r.errors++ == 0)
      r.first_error =
          fmt::format("request {} of client {}: status {}: {}", i % o.requests, i / o.requests,
                      status[static_cast<size_t>(i)], failure[static_cast<size_t>(i)]);
  }
  r.requests_per_second = static_cast<double>(total) / r.seconds;
  std::sort(latency_ms.begin(), latency_ms.end());
  r.p50_ms = percentile(latency_ms, 50);
  r.p95_ms = percentile(latency_ms, 95);
  r.p99_ms = percentile(latency_ms, 99);
  r.max_ms = latency_ms.back();
  httplib::Client probe("127.0.0.1", port);
  if (auto h = probe.Get("/health"); h && h->status == 200)
    r.batches = nlohmann::json::parse(h->body).value("batches", int64_t{0});
  server.signal(SIGTERM);
  r.server_exit = server.wait();
  return r;
}

}  // namespace transduce::bench
