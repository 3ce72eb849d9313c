// Dynamic batching, with a stand-in backend that records each batch and can hold the worker busy:
// requests that wait while the model works are merged, within the token and request limits and
// only with the same search settings; each gets its own results; a full queue refuses at once;
// stopping translates what is queued; several workers translate several batches at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "serve/translation_queue.h"

namespace transduce {
namespace {

using namespace std::chrono_literals;
using Sources = std::vector<std::vector<int32_t>>;

// Echoes each source back as its translation's text ("5 6 7"), records every batch's first ids
// and options, and holds the worker inside the first batch until released.
class Backend {
 public:
  Translations operator()(const Sources& sources, const TranslateOptions& options) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::vector<int32_t> firsts;
    for (const auto& s : sources) firsts.push_back(s.empty() ? -1 : s.front());
    batches.push_back(firsts);
    beams.push_back(options.search.beam);
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
    Translations out;
    for (const auto& s : sources) {
      if (!s.empty() && s.front() == 13) throw Error("no translation for 13");
      Translation t;
      for (int32_t id : s) t.text += (t.text.empty() ? "" : " ") + std::to_string(id);
      out.push_back({t});
    }
    return out;
  }
  void wait_for_batches(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, 30s, [&] { return batches.size() >= n; }));
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

  std::vector<std::vector<int32_t>> batches;
  std::vector<int> beams;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool released_ = false;
};

TranslationQueue::Backend use(Backend& b) {
  return [&b](const Sources& s, const std::vector<SentenceControls>&, const TranslateOptions& o) {
    return b(s, o);
  };
}

TranslateOptions beam(int k) {
  TranslateOptions o;
  o.search.beam = k;
  return o;
}

std::string text_of(std::future<Translations>& f, size_t sentence = 0) {
  return f.get().at(sentence).at(0).text;
}

// Queues `request` and expects it to be accepted.
std::future<Translations> queued(TranslationQueue& q, Sources request,
                                 const TranslateOptions& o = beam(4)) {
  TranslationQueue::Admission a = q.submit(std::move(request), o);
  EXPECT_EQ(a.status, TranslationQueue::Admission::Queued);
  return std::move(a.result);
}

BatchingOptions batching(int64_t tokens = 1000, int64_t requests = 0) {
  BatchingOptions b;
  b.batch_tokens = tokens;
  b.batch_requests = requests;
  b.max_wait = 0us;
  return b;
}

TEST(TranslationQueue, MergesTheRequestsThatArriveWhileTheModelIsBusy) {
  Backend backend;
  TranslationQueue q(use(backend), batching());
  auto a = queued(q, {{1, 1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}, {3, 3}});
  auto c = queued(q, {{4}});
  auto d = queued(q, {{}, {5, 6, 7}});
  EXPECT_EQ(q.stats().queued_requests, 3);
  EXPECT_EQ(q.stats().queued_sentences, 5);
  EXPECT_EQ(q.stats().running_requests, 1);
  backend.release();
  EXPECT_EQ(text_of(a), "1 1");
  const Translations bt = b.get();
  EXPECT_EQ(bt.at(0).at(0).text, "2");
  EXPECT_EQ(bt.at(1).at(0).text, "3 3");
  EXPECT_EQ(text_of(c), "4");
  const Translations dt = d.get();
  EXPECT_EQ(dt.at(0).at(0).text, "");
  EXPECT_EQ(dt.at(1).at(0).text, "5 6 7");
  q.stop();
  EXPECT_EQ(backend.batches, (std::vector<std::vector<int32_t>>{{1}, {2, 3, 4, -1, 5}}));
  const QueueStats s = q.stats();
  EXPECT_EQ(s.batches, 2);
  EXPECT_EQ(s.requests, 4);
  EXPECT_EQ(s.sentences, 6);
  EXPECT_EQ(s.queued_requests, 0);
}

TEST(TranslationQueue, ABatchNeverHoldsMoreTokensThanAllowed) {
  Backend backend;
  TranslationQueue q(use(backend), batching(/*tokens=*/10));
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  // 4 pieces and EOS: two requests fill the 10 tokens; the last (2 tokens) fits beside none.
  std::vector<std::future<Translations>> waiting;
  for (int32_t id : {2, 3, 4, 5}) waiting.push_back(queued(q, {{id, 0, 0, 0}}));
  waiting.push_back(queued(q, {{6}}));
  backend.release();
  for (auto& f : waiting) f.get();
  q.stop();
  EXPECT_EQ(backend.batches, (std::vector<std::vector<int32_t>>{{1}, {2, 3}, {4, 5}, {6}}));
}

TEST(TranslationQueue, OneRequestABatchWhenMergingIsOff) {
  Backend backend;
  TranslationQueue q(use(backend), batching(1000, /*requests=*/1));
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}});
  auto c = queued(q, {{3}, {4}});
  backend.release();
  EXPECT_EQ(text_of(b), "2");
  EXPECT_EQ(text_of(c, 1), "4");
  q.stop();
  EXPECT_EQ(backend.batches, (std::vector<std::vector<int32_t>>{{1}, {2}, {3, 4}}));
}

TEST(TranslationQueue, RequestsWithOtherSearchSettingsGetTheirOwnBatch) {
  Backend backend;
  TranslationQueue q(use(backend), batching());
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}}, beam(4));
  auto c = queued(q, {{3}}, beam(2));
  auto d = queued(q, {{4}}, beam(4));
  TranslateOptions with_attention = beam(4);
  with_attention.attention = true;
  auto e = queued(q, {{5}}, with_attention);
  backend.release();
  EXPECT_EQ(text_of(c), "3");
  EXPECT_EQ(text_of(e), "5");
  q.stop();
  EXPECT_EQ(backend.batches, (std::vector<std::vector<int32_t>>{{1}, {2, 4}, {3}, {5}}));
  EXPECT_EQ(backend.beams, (std::vector<int>{4, 4, 2, 4}));
}

TEST(TranslationQueue, AFullQueueRefusesAtOnceAndStoppingTranslatesWhatWaits) {
  Backend backend;
  BatchingOptions o = batching();
  o.max_queued_sentences = 3;
  TranslationQueue q(use(backend), o);
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}, {2}});
  auto c = queued(q, {{3}});
  EXPECT_EQ(q.submit({{4}}, beam(4)).status, TranslationQueue::Admission::Full);
  std::thread stopper([&] { q.stop(); });
  while (!q.stopping()) std::this_thread::yield();
  EXPECT_EQ(q.submit({{5}}, beam(4)).status, TranslationQueue::Admission::Stopping);
  backend.release();
  stopper.join();
  EXPECT_EQ(text_of(first), "1");
  EXPECT_EQ(text_of(b, 1), "2");
  EXPECT_EQ(text_of(c), "3");
  EXPECT_EQ(q.stats().requests, 3);
}

TEST(TranslationQueue, RequestsBeingServedAreBoundedToo) {
  Backend backend;
  BatchingOptions o = batching();
  o.max_requests = 2;  // the one being translated and one queued
  TranslationQueue q(use(backend), o);
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}});
  EXPECT_EQ(q.submit({{3}}, beam(4)).status, TranslationQueue::Admission::Busy);
  backend.release();
  EXPECT_EQ(text_of(b), "2");
  auto d = queued(q, {{4}});  // room again once answered
  EXPECT_EQ(text_of(d), "4");
}

TEST(TranslationQueue, ABackendFailureReachesEveryRequestOfItsBatchAndNoOther) {
  Backend backend;
  TranslationQueue q(use(backend), batching());
  auto first = queued(q, {{1}});
  backend.wait_for_batches(1);
  auto b = queued(q, {{2}});
  auto c = queued(q, {{13}});
  auto d = queued(q, {{3}}, beam(2));
  backend.release();
  EXPECT_THROW(b.get(), Error);
  try {
    c.get();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no translation for 13");
  }
  EXPECT_EQ(text_of(d), "3");
  EXPECT_EQ(text_of(first), "1");
}

TEST(TranslationQueue, ALoneRequestRunsOnceItsWaitIsOver) {
  Backend backend;
  backend.release();
  BatchingOptions o = batching(/*tokens=*/1000);
  o.max_wait = 20ms;
  TranslationQueue q(use(backend), o);
  auto f = queued(q, {{7, 8}});
  ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(text_of(f), "7 8");
}

// Polls `done` (with the queue's own lock taken inside stats()) until it holds or a minute passes.
template <class F>
bool eventually(F done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(TranslationQueue, TwoWorkersTranslateTwoBatchesAtOnce) {
  Backend first, second;
  std::mutex m;
  std::multiset<int> set_up;
  std::set<std::thread::id> threads;
  TranslationQueue q({use(first), use(second)}, batching(), [&](int w) {
    std::lock_guard<std::mutex> lock(m);
    set_up.insert(w);
    threads.insert(std::this_thread::get_id());
  });
  auto a = queued(q, {{1}});
  ASSERT_TRUE(eventually([&] { return q.stats().running_requests == 1; }));
  // One worker is held inside request a's batch; the other takes what comes next.
  auto b = queued(q, {{2}});
  ASSERT_TRUE(eventually([&] { return q.stats().running_requests == 2; }));
  EXPECT_EQ(q.stats().queued_requests, 0);
  auto c = queued(q, {{3, 3}});  // both workers busy: it waits
  EXPECT_EQ(q.stats().queued_requests, 1);
  first.release();
  second.release();
  EXPECT_EQ(text_of(a), "1");
  EXPECT_EQ(text_of(b), "2");
  EXPECT_EQ(text_of(c), "3 3");
  q.stop();
  EXPECT_EQ(first.batches.size() + second.batches.size(), 3u);
  EXPECT_GE(first.batches.size(), 1u);
  EXPECT_GE(second.batches.size(), 1u);
  EXPECT_EQ(set_up, (std::multiset<int>{0, 1}));
  EXPECT_EQ(threads.size(), 2u);
  const QueueStats s = q.stats();
  EXPECT_EQ(s.batches, 3);
  EXPECT_EQ(s.requests, 3);
  EXPECT_EQ(s.running_requests, 0);
}

TEST(TranslationQueue, StoppingWithSeveralWorkersTranslatesEverythingQueued) {
  Backend first, second;
  first.release();
  second.release();
  BatchingOptions o = batching(/*tokens=*/4, /*requests=*/0);
  o.max_wait = 2ms;
  std::vector<std::future<Translations>> results;
  {
    TranslationQueue q({use(first), use(second)}, o);
    for (int32_t i = 100; i < 300; ++i) results.push_back(queued(q, {{i, i}}));
    q.stop();
    EXPECT_EQ(q.stats().requests, 200);
  }
  for (int32_t i = 100; i < 300; ++i)
    EXPECT_EQ(text_of(results[static_cast<size_t>(i - 100)]), fmt::format("{} {}", i, i));
  EXPECT_EQ(first.batches.size() + second.batches.size(), 200u);  // 3 tokens each, 4 a batch
}

TEST(TranslationQueue, RefusesSettingsThatCannotWork) {
  Backend backend;
  EXPECT_THROW(TranslationQueue(use(backend), batching(0)), Error);
  EXPECT_THROW(TranslationQueue(use(backend), batching(10, -1)), Error);
  BatchingOptions o = batching();
  o.max_queued_sentences = 0;
  EXPECT_THROW(TranslationQueue(use(backend), o), Error);
  o = batching();
  o.max_requests = 0;
  EXPECT_THROW(TranslationQueue(use(backend), o), Error);
  EXPECT_THROW(TranslationQueue(std::vector<TranslationQueue::Backend>{}, batching()), Error);
}

}  // namespace
}  // namespace transduce
