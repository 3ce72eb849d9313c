// `transduce serve`: a model behind HTTP (serve/http_server.h), with dynamic batching. SIGTERM or
// Ctrl-C stops accepting connections, answers every request already received, then exits 0; a
// second signal exits at once.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/threads.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "serve/http_server.h"

namespace transduce::cli {

namespace {

struct ServeFlags {
  std::string model_dir;
  std::string compute_type;  // empty: the model's own
  ServerOptions server;
  BatchingOptions batching;
  double max_wait_ms = 5;
  int workers = 1;
};

nlohmann::json describe(const LoadedModel& m) {
  return {{"name", m.name()},
          {"config", m.config()},
          {"vocab_size", m.config().vocab_size},
          {"parameters", m.config().parameter_count()},
          {"compute_type", precision_name(m.model().precision())},
          {"step", m.step() < 0 ? nlohmann::json(nullptr) : nlohmann::json(m.step())}};
}

void run_serve(ServeFlags f) {
  // Signals are taken by one thread with sigwait: blocked here, before any thread starts, so
  // every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  spdlog::set_default_logger(spdlog::stdout_logger_mt("transduce"));  // no colour codes

  const std::optional<Precision> compute = compute_type_choice(f.compute_type);
  // The models are loaded without starting an OpenMP pool on this thread: libgomp lets a pool's
  // threads spin between parallel regions only while pools hold no more threads than there are
  // cores, and past that each region waits for its threads to wake (measured: an int8 model,
  // whose loading quantizes in parallel, served 0.6 times as many requests). Each worker starts
  // its own pool.
  const int threads_here = num_threads();
  std::optional<ScopedOmpThreads> serial_loading(std::in_place, 1);
  LoadedModel loaded(f.model_dir, compute);
  ServiceLimits& limits = f.server.limits;
  const int64_t model_limit = loaded.config().max_positions - 1;
  if (limits.max_sentence_tokens == 0) limits.max_sentence_tokens = model_limit;
  if (limits.max_sentence_tokens < 1 || limits.max_sentence_tokens > model_limit)
    fail("--max-sentence-tokens must be between 1 and the model's {}, got {}", model_limit,
         limits.max_sentence_tokens);
  if (limits.max_sentences < 1) fail("--max-sentences must be at least 1");
  if (limits.max_body_bytes < 1) fail("--max-body-bytes must be at least 1");
  if (limits.max_beam < 1) fail("--max-beam must be at least 1");
  const SearchOptions& d = f.server.defaults.search;
  if (d.beam < 1 || d.beam > limits.max_beam)
    fail("--beam must be between 1 and --max-beam {}, got {}", limits.max_beam, d.beam);
  if (d.nbest > d.beam) fail("--nbest must be at most --beam {}, got {}", d.beam, d.nbest);
  if (f.max_wait_ms < 0) fail("--max-wait-ms must not be negative, got {}", f.max_wait_ms);
  if (limits.max_sentences > f.batching.max_queued_sentences)
    fail("--max-sentences {} is more than --max-queue {} holds", limits.max_sentences,
         f.batching.max_queued_sentences);
  f.batching.max_wait = std::chrono::microseconds(static_cast<int64_t>(f.max_wait_ms * 1000));
  f.server.defaults.batch_tokens = f.batching.batch_tokens;

  // Each worker translates with its own copy of the model (layers keep per-call state) and its
  // share of the threads.
  if (f.workers < 1) fail("--workers must be at least 1, got {}", f.workers);
  const int threads = std::max(1, threads_here / f.workers);
  std::vector<std::unique_ptr<LoadedModel>> copies;
  std::vector<std::unique_ptr<Translator>> translators;
  std::vector<TranslationQueue::Backend> backends;
  for (int w = 0; w < f.workers; ++w) {
    LoadedModel& m =
        w == 0 ? loaded : *copies.emplace_back(std::make_unique<LoadedModel>(f.model_dir, compute));
    Translator& t = *translators.emplace_back(
        std::make_unique<Translator>(m.model(), m.tokenizer(), f.server.defaults));
    backends.push_back([&t](const std::vector<std::vector<int32_t>>& sources,
                            const std::vector<SentenceControls>& controls,
                            const TranslateOptions& options) {
      return t.translate_pieces(sources, options, controls);
    });
  }
  serial_loading.reset();
  // OpenMP settings are per thread: each worker sets its own.
  TranslationQueue queue(std::move(backends), f.batching, [threads](int) { set_threads(threads); });
  TranslationServer server(loaded.tokenizer(), queue, describe(loaded), f.server);
  const int port = server.bind();

  std::thread signals([&server, &stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("{}: answering the requests already received, then stopping", strsignal(sig));
    server.stop();
    sigwait(&stop_signals, &sig);
    spdlog::warn("{} again: exiting now", strsignal(sig));
    std::_Exit(1);
  });
  signals.detach();  // waits for a second signal until the process ends

  spdlog::info("listening on http://{}:{}/ with model {} ({} parameters, {} worker{} x {} threads)",
               f.server.host, port, loaded.name(), loaded.config().parameter_count(), f.workers,
               f.workers == 1 ? "" : "s", threads);
  server.serve();
  queue.stop();
  const QueueStats s = queue.stats();
  spdlog::info("stopped: {} requests, {} sentences in {} batches", s.requests, s.sentences,
               s.batches);
}

}  // namespace

void register_serve(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "translate over HTTP (JSON API and a web page)");
  cmd->add_option("-m,--model", f->model_dir, "model directory")->required();
  add_compute_type(*cmd, f->compute_type);
  ServerOptions& s = f->server;
  cmd->add_option("--host", s.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", s.port, "port (0: any free one, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  BatchingOptions& b = f->batching;
  cmd->add_option("--batch-tokens", b.batch_tokens,
                  "source tokens merged into one batch (dynamic batching)")
      ->capture_default_str();
  cmd->add_option("--batch-requests", b.batch_requests,
                  "most requests merged into one batch (0: no limit; 1: one at a time)")
      ->capture_default_str();
  cmd->add_option("--max-wait-ms", f->max_wait_ms,
                  "longest a request waits for others to share its batch")
      ->capture_default_str();
  cmd->add_option("--workers", f->workers,
                  "batches translated at once, each by its own copy of the model with its share "
                  "of --threads")
      ->capture_default_str();
  cmd->add_option("--max-queue", b.max_queued_sentences,
                  "sentences waiting before requests are refused with 503")
      ->capture_default_str();
  cmd->add_option("--max-requests", b.max_requests,
                  "requests queued or being translated before more are refused with 503 (each "
                  "holds a connection thread)")
      ->capture_default_str();
  ServiceLimits& l = s.limits;
  cmd->add_option("--max-body-bytes", l.max_body_bytes, "largest request body (413 beyond)")
      ->capture_default_str();
  cmd->add_option("--max-sentences", l.max_sentences, "most sentences a request (413 beyond)")
      ->capture_default_str();
  l.max_sentence_tokens = 0;
  cmd->add_option("--max-sentence-tokens", l.max_sentence_tokens,
                  "most subword tokens a sentence (400 beyond; default: what the model takes)");
  cmd->add_option("--max-beam", l.max_beam, "largest beam a request may ask for")
      ->capture_default_str();
  // The defaults of requests that give none.
  add_option_flags(*cmd, search_option_specs(), s.defaults.search,
                   {"beam", "alpha", "max_len_a", "max_len_b", "nbest", "long_input"});
  cmd->callback([f] { run_serve(*f); });
}

}  // namespace transduce::cli
