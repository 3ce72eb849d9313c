#include "serve/translation_queue.h"

#include "core/error.h"
#include "decode/search_options.h"

namespace transduce {

namespace {

using Clock = std::chrono::steady_clock;

// Requests may share a batch when the search treats them alike (the batch size aside): every
// declared search option equal, the input limit too (the batch is held to the first request's).
bool mergeable(const TranslateOptions& a, const TranslateOptions& b) {
  static const std::vector<std::string> keys = option_keys(search_option_specs());
  return search_options_json(a.search, keys) == search_options_json(b.search, keys) &&
         !a.search.constrain && !b.search.constrain && a.attention == b.attention;
}

int64_t source_tokens(const std::vector<std::vector<int32_t>>& sources) {
  int64_t n = 0;
  for (const auto& s : sources)
    if (!s.empty()) n += static_cast<int64_t>(s.size()) + 1;  // EOS
  return n;
}

}  // namespace

TranslationQueue::TranslationQueue(Backend backend, BatchingOptions options,
                                   std::function<void()> worker_setup)
    : TranslationQueue(std::vector<Backend>{std::move(backend)}, options,
                       worker_setup ? std::function<void(int)>(
                                          [setup = std::move(worker_setup)](int) { setup(); })
                                    : nullptr) {}

TranslationQueue::TranslationQueue(std::vector<Backend> backends, BatchingOptions options,
                                   std::function<void(int worker)> worker_setup)
    : backends_(std::move(backends)), options_(options) {
  if (backends_.empty()) fail("--workers must be at least 1");
  if (options_.batch_tokens <= 0)
    fail("--batch-tokens must be positive, got {}", options_.batch_tokens);
  if (options_.batch_requests < 0)
    fail("--batch-requests must be 0 (no limit) or more, got {}", options_.batch_requests);
  if (options_.max_wait.count() < 0) fail("--max-wait-ms must not be negative");
  if (options_.max_queued_sentences <= 0)
    fail("--max-queue must be positive, got {}", options_.max_queued_sentences);
  if (options_.max_requests <= 0)
    fail("--max-requests must be positive, got {}", options_.max_requests);
  for (int w = 0; w < static_cast<int>(backends_.size()); ++w)
    workers_.emplace_back([this, w, worker_setup] {
      if (worker_setup) worker_setup(w);
      work(w);
    });
}

TranslationQueue::~TranslationQueue() {
  stop();
}

TranslationQueue::Admission TranslationQueue::submit(std::vector<std::vector<int32_t>> sources,
                                                     const TranslateOptions& options,
                                                     std::vector<SentenceControls> controls) {
  if (controls.empty())
    for (size_t i = 0; i < sources.size(); ++i) controls.push_back({{}, i});
  if (controls.size() != sources.size())
    fail("{} sentence controls for {} sentences", controls.size(), sources.size());
  Job job;
  job.controls = std::move(controls);
  job.tokens = source_tokens(sources);
  job.sources = std::move(sources);
  job.options = options;
  job.arrival = Clock::now();
  Admission admission{Admission::Queued, job.result.get_future()};
  const int64_t n = static_cast<int64_t>(job.sources.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return {Admission::Stopping, {}};
    if (stats_.queued_sentences + n > options_.max_queued_sentences) return {Admission::Full, {}};
    if (stats_.queued_requests + stats_.running_requests >= options_.max_requests)
      return {Admission::Busy, {}};
    queue_.push_back(std::move(job));
    ++stats_.queued_requests;
    stats_.queued_sentences += n;
  }
  changed_.notify_all();
  return admission;
}

TranslationQueue::Batch TranslationQueue::batch_for_front() const {
  Batch b{{0}, queue_.front().tokens, false};
  for (size_t i = 1; i < queue_.size(); ++i) {
    const Job& job = queue_[i];
    if (!mergeable(job.options, queue_.front().options)) continue;
    const bool room = options_.batch_requests == 0 ||
                      static_cast<int64_t>(b.jobs.size()) < options_.batch_requests;
    if (!room || b.tokens + job.tokens > options_.batch_tokens) {
      b.full = true;  // a smaller one further back may still fit
      continue;
    }
    b.jobs.push_back(i);
    b.tokens += job.tokens;
  }
  b.full = b.full || b.tokens >= options_.batch_tokens ||
           (options_.batch_requests > 0 &&
            static_cast<int64_t>(b.jobs.size()) >= options_.batch_requests);
  return b;
}

void TranslationQueue::work(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and everything translated
    // Wait for company until the batch is full or the oldest request has waited long enough;
    // then look again from the top, since another worker may have taken the requests meanwhile.
    const Clock::time_point deadline = queue_.front().arrival + options_.max_wait;
    if (!stopping_ && !batch_for_front().full && Clock::now() < deadline) {
      changed_.wait_until(lock, deadline);
      continue;
    }
    const Batch picked = batch_for_front();
    std::vector<Job> batch;
    int64_t sentences = 0;
    for (size_t i : picked.jobs) {
      sentences += static_cast<int64_t>(queue_[i].sources.size());
      batch.push_back(std::move(queue_[i]));
    }
    for (auto it = picked.jobs.rbegin(); it != picked.jobs.rend(); ++it)
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(*it));
    const int64_t requests = static_cast<int64_t>(batch.size());
    stats_.queued_requests -= requests;
    stats_.queued_sentences -= sentences;
    stats_.running_requests += requests;
    lock.unlock();
    if (backends_.size() > 1) changed_.notify_all();  // what is left may be another's batch
    run(backends_[static_cast<size_t>(worker)], batch);
    lock.lock();
    stats_.running_requests -= requests;
    ++stats_.batches;
    stats_.requests += requests;
    stats_.sentences += sentences;
  }
}

void TranslationQueue::run(const Backend& backend, std::vector<Job>& batch) {
  std::vector<std::vector<int32_t>> sources;
  std::vector<SentenceControls> controls;
  for (const Job& job : batch) {
    sources.insert(sources.end(), job.sources.begin(), job.sources.end());
    controls.insert(controls.end(), job.controls.begin(), job.controls.end());
  }
  TranslateOptions options = batch.front().options;
  options.batch_tokens = options_.batch_tokens;
  std::vector<Translations> results;
  try {
    Translations all = backend(sources, controls, options);
    TD_CHECK(all.size() == sources.size(), "{} translations for {} sentences", all.size(),
             sources.size());
    size_t at = 0;
    for (const Job& job : batch) {
      results.emplace_back(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(at)),
                           std::make_move_iterator(
                               all.begin() + static_cast<std::ptrdiff_t>(at + job.sources.size())));
      at += job.sources.size();
    }
  } catch (...) {
    for (Job& job : batch) job.result.set_exception(std::current_exception());
    return;
  }
  for (size_t i = 0; i < batch.size(); ++i) batch[i].result.set_value(std::move(results[i]));
}

void TranslationQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  std::lock_guard<std::mutex> join(join_mutex_);
  for (std::thread& w : workers_)
    if (w.joinable()) w.join();
}

bool TranslationQueue::stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

QueueStats TranslationQueue::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace transduce
