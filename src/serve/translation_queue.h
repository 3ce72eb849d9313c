// Dynamic batching for the translation service: requests from many connections wait in one
// bounded queue, and a worker thread merges those that arrive close together into one batch for
// the model (up to `batch_tokens` source tokens, waiting at most `max_wait` for more). By default
// one worker: one thread pool doing the arithmetic (OpenMP and OpenBLAS), however many
// connections are open. With several workers (each with its own backend, i.e. its own copy of
// the model, and its share of the threads) several batches are translated at once, so one
// batch's serial search steps overlap another's arithmetic.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "decode/translator.h"

namespace transduce {

using Translations = std::vector<std::vector<Translation>>;  // per sentence, best first

struct BatchingOptions {
  int64_t batch_tokens = 4000;  // source tokens merged into one batch (EOS counted)
  int64_t batch_requests = 0;   // most requests in one batch; 0: no limit, 1: no merging
  std::chrono::microseconds max_wait{std::chrono::milliseconds(5)};
  int64_t max_queued_sentences = 1024;  // beyond this, requests are refused at once
  int64_t max_requests = 256;  // requests queued or being translated; beyond, refused at once
};

struct QueueStats {
  int64_t queued_requests = 0, queued_sentences = 0;
  int64_t running_requests = 0;                      // in the batches being translated
  int64_t batches = 0, requests = 0, sentences = 0;  // translated so far
};

class TranslationQueue {
 public:
  // Translates one merged batch: sentences in pieces (without EOS) and their controls (a prefix
  // each, and the sentence's index in its request as its id), all with the same options. In the
  // service a Translator; in tests, anything.
  using Backend = std::function<Translations(const std::vector<std::vector<int32_t>>& sources,
                                             const std::vector<SentenceControls>& controls,
                                             const TranslateOptions& options)>;
  // `worker_setup` runs first on the worker thread (thread settings are per thread).
  TranslationQueue(Backend backend, BatchingOptions options,
                   std::function<void()> worker_setup = nullptr);
  // One worker per backend; `worker_setup(w)` runs first on worker w's thread.
  TranslationQueue(std::vector<Backend> backends, BatchingOptions options,
                   std::function<void(int worker)> worker_setup = nullptr);
  ~TranslationQueue();  // stop()
  TranslationQueue(const TranslationQueue&) = delete;
  TranslationQueue& operator=(const TranslationQueue&) = delete;

  struct Admission {
    // Full: too many sentences wait; Busy: too many requests are queued or being translated.
    enum Status { Queued, Full, Busy, Stopping } status;
    std::future<Translations> result;  // valid when Queued; holds the backend's exception if any
  };
  // Requests whose options differ in anything but the batch size are never merged. `controls`:
  // one per source, or none (no prefixes; ids 0, 1, ...).
  Admission submit(std::vector<std::vector<int32_t>> sources, const TranslateOptions& options,
                   std::vector<SentenceControls> controls = {});

  // Refuses new requests, translates every queued one, then ends the workers. Idempotent.
  void stop();
  bool stopping() const;
  QueueStats stats() const;
  const BatchingOptions& options() const { return options_; }

 private:
  struct Job {
    std::vector<std::vector<int32_t>> sources;
    std::vector<SentenceControls> controls;
    TranslateOptions options;
    int64_t tokens = 0;
    std::chrono::steady_clock::time_point arrival;
    std::promise<Translations> result;
  };
  // The front job and the later ones it can share a batch with (queue positions, in order), and
  // whether the batch is full: nothing mergeable left that fits. Called with the lock held.
  struct Batch {
    std::vector<size_t> jobs;
    int64_t tokens;
    bool full;
  };
  Batch batch_for_front() const;
  void work(int worker);
  void run(const Backend& backend, std::vector<Job>& batch);

  std::vector<Backend> backends_;
  BatchingOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  QueueStats stats_;
  bool stopping_ = false;
  std::mutex join_mutex_;
  std::vector<std::thread> workers_;
};

}  // namespace transduce
