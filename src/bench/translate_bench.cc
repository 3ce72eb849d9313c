#include "bench/translate_bench.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"
#include "text/special_ids.h"

namespace transduce::bench {

namespace {

constexpr int32_t kFirstWord = 4;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<std::vector<int32_t>> make_decode_sources(int sentences, int vocab, uint64_t seed,
                                                      int min_len, int max_len) {
  if (sentences <= 0) fail("decoding benchmark: sentences must be positive, got {}", sentences);
  if (vocab <= kFirstWord)
    fail("decoding benchmark: the vocabulary needs more than {} ids, got {}", kFirstWord, vocab);
  if (min_len < 1 || max_len < min_len)
    fail("decoding benchmark: bad source lengths {}..{}", min_len, max_len);
  SplitMix64 rng(seed);
  std::vector<std::vector<int32_t>> sources(sentences);
  for (auto& words : sources) {
    words.resize(static_cast<size_t>(rng.randint(min_len, max_len)));
    for (int32_t& w : words) w = static_cast<int32_t>(rng.randint(kFirstWord, vocab - 1));
  }
  return sources;
}

std::vector<int64_t> length_order(const std::vector<std::vector<int32_t>>& sources) {
  std::vector<int64_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return sources[a].size() > sources[b].size(); });
  return order;
}

// BENCHMARKS.md draws only the words. Our batcher appends EOS to every source in training, so the
// model has only ever seen sources ending in EOS; the benchmark does the same, and the encoder
// sees L + 1 tokens per sentence (10,558 for the default workload).
Tensor make_source_batch(const std::vector<std::vector<int32_t>>& sources,
                         const std::vector<int64_t>& order, int64_t begin, int64_t end) {
  if (begin < 0 || end > static_cast<int64_t>(order.size()) || begin >= end)
    fail("decoding benchmark: bad batch [{}, {}) of {} sentences", begin, end, order.size());
  size_t longest = 0;
  for (int64_t i = begin; i < end; ++i) longest = std::max(longest, sources[order[i]].size());
  const int64_t cols = static_cast<int64_t>(longest) + 1;
  Tensor src = Tensor::empty({end - begin, cols}, DType::I32);
  for (int64_t i = begin; i < end; ++i) {
    const std::vector<int32_t>& words = sources[order[i]];
    int32_t* row = src.i32() + (i - begin) * cols;
    std::copy(words.begin(), words.end(), row);
    row[words.size()] = kEosId;
    std::fill(row + words.size() + 1, row + cols, kPadId);
  }
  return src;
}

void force_output_lengths(SearchOptions& options, std::vector<int64_t> lengths, int64_t vocab) {
  options.constrain = [lengths = std::move(lengths), vocab](
                          int64_t sentence, std::span<const int32_t> prefix, float* logp) {
    constexpr float kBanned = -std::numeric_limits<float>::infinity();
    const int64_t step = static_cast<int64_t>(prefix.size());
    const int64_t length = lengths[static_cast<size_t>(sentence)];
    if (step < length) {
      logp[kEosId] = kBanned;
    } else {  // step == length: only EOS (the search never asks past it: the sentence has ended)
      const float eos = logp[kEosId];
      std::fill(logp, logp + vocab, kBanned);
      logp[kEosId] = eos;
    }
  };
}

TranslateBenchResult run_translate_bench(Transformer& model, const TranslateBenchOptions& o) {
  if (o.batch_sentences <= 0)
    fail("bench translate: --batch must be positive, got {}", o.batch_sentences);
  if (o.warmup_batches < 0)
    fail("bench translate: warm-up batches must not be negative, got {}", o.warmup_batches);
  const int64_t vocab = model.config().vocab_size;
  const auto sources = make_decode_sources(o.sentences, static_cast<int>(vocab), o.data_seed,
                                           o.min_words, o.max_words);
  const std::vector<int64_t> order = length_order(sources);

  TranslateBenchResult r;
  r.search = o.greedy ? "greedy" : "beam";
  r.beam = o.greedy ? 1 : o.search.beam;
  r.threads = num_threads();
  r.sentences = o.sentences;
  for (const auto& words : sources) r.source_words += static_cast<int64_t>(words.size());
  r.source_tokens = r.source_words + r.sentences;

  // The length limit must not bind before the forced EOS at step L (checked below). Its default,
  // source tokens (words + EOS) + 50, is the toolkit's and real-text decoding's, so the decoder
  // cache is sized as it is there.
  SearchOptions base = o.search;
  base.beam = r.beam;
  base.nbest = 1;

  // Everything but the search is prepared before the clock starts.
  struct Work {
    Tensor src;
    SearchOptions options;
    int64_t begin = 0, end = 0;
  };
  std::vector<Work> batches;
  for (int64_t begin = 0; begin < o.sentences; begin += o.batch_sentences) {
    Work w;
    w.begin = begin;
    w.end = std::min<int64_t>(begin + o.batch_sentences, o.sentences);
    w.src = make_source_batch(sources, order, w.begin, w.end);
    std::vector<int64_t> lengths;
    for (int64_t i = w.begin; i < w.end; ++i) {
      const int64_t length = static_cast<int64_t>(sources[order[i]].size());
      // The search stops at min(limit, positions - 1) words: that must come after the forced EOS.
      const int64_t limit =
          std::min<int64_t>(max_output_length(length + 1, base), model.config().max_positions - 1);
      if (limit <= length)
        fail("bench translate: the model's {} positions are too few for {} output words",
             model.config().max_positions, length);
      lengths.push_back(length);
    }
    w.options = base;
    force_output_lengths(w.options, std::move(lengths), vocab);
    batches.push_back(std::move(w));
  }
  r.batches = static_cast<int64_t>(batches.size());

  // The words of each sentence of the batch, best hypothesis first.
  SearchArenas arenas;
  auto translate = [&](const Work& w) {
    std::vector<std::vector<int32_t>> out;
    if (o.greedy) {
      for (Hypothesis& h : greedy_search(model, w.src, w.options, &arenas))
        out.push_back(std::move(h.tokens));
    } else {
      for (auto& nbest : beam_search(model, w.src, w.options, &arenas)) {
        if (nbest.empty()) fail("bench translate: beam search ended a sentence without output");
        out.push_back(std::move(nbest.front().tokens));
      }
    }
    return out;
  };

  for (int i = 0; i < o.warmup_batches; ++i) translate(batches[i % batches.size()]);

  r.output_lengths.assign(sources.size(), -1);
  for (const Work& w : batches) {
    const PhaseRecording recording(r.phases);
    const auto start = std::chrono::steady_clock::now();
    const auto out = translate(w);
    r.batch_seconds.push_back(seconds_since(start));
    for (int64_t i = w.begin; i < w.end; ++i) {
      const std::vector<int32_t>& words = out[static_cast<size_t>(i - w.begin)];
      for (int32_t t : words)
        if (t == kPadId || t == kBosId || t == kEosId || t < 0 || t >= vocab)
          fail("bench translate: output token {} of sentence {} is not a word", t, order[i]);
      r.output_lengths[order[i]] = static_cast<int64_t>(words.size());
    }
  }
  for (size_t s = 0; s < sources.size(); ++s) {
    if (r.output_lengths[s] != static_cast<int64_t>(sources[s].size()))
      fail(
          "bench translate: sentence {} has {} output words, not its source's {}: the forced "
          "length did not hold",
          s, r.output_lengths[s], sources[s].size());
    r.output_tokens += r.output_lengths[s] + 1;  // + EOS
  }
  if (o.sentences == kDecodeSentences && o.data_seed == 1 && o.min_words == 15 &&
      o.max_words == 25 && r.output_tokens != kDecodeOutputTokens)
    fail("bench translate: {} output tokens, BENCHMARKS.md's workload has {}", r.output_tokens,
         kDecodeOutputTokens);

  r.steps = r.phases.count(Phase::kDecoderOther);  // one decoder step per search step (one model)
  r.seconds = std::accumulate(r.batch_seconds.begin(), r.batch_seconds.end(), 0.0);
  r.sentences_per_second = static_cast<double>(r.sentences) / r.seconds;
  r.tokens_per_second = static_cast<double>(r.output_tokens) / r.seconds;
  return r;
}

}  // namespace transduce::bench
