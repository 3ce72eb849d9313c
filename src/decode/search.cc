#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "core/phase_clock.h"
#include "ops/ops.h"
#include "text/special_ids.h"

namespace transduce {

namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();
// Tokens a scan over the vocabulary compares at once before looking at them one by one.
constexpr int32_t kScanBlock = 32;

int64_t source_tokens(const Tensor& src, int64_t b) {
  int64_t n = 0;
  for (int64_t j = 0; j < src.dim(1); ++j) n += src.i32()[b * src.dim(1) + j] != kPadId;
  return n;
}

// The rules every step shares: PAD and BOS are never produced; the caller's constraint; and at
// the length limit only EOS is left.
void restrict_row(float* logp, int64_t vocab, int64_t sentence, std::span<const int32_t> prefix,
                  int64_t max_len, const SearchOptions& o) {
  const int64_t step = static_cast<int64_t>(prefix.size());
  logp[kPadId] = kBanned;
  logp[kBosId] = kBanned;
  if (o.constrain) o.constrain(sentence, prefix, logp);
  if (step >= max_len) {
    const float eos = logp[kEosId];
    std::fill(logp, logp + vocab, kBanned);
    logp[kEosId] = std::isfinite(eos) ? eos : 0.0f;
  }
}

// The first index of a row's largest value (std::max_element's answer) in two vectorised passes:
// the maximum, then where it first occurs.
int32_t first_max(const float* row, int64_t vocab) {
  float mx = row[0];
#pragma omp simd reduction(max : mx)
  for (int64_t v = 1; v < vocab; ++v) mx = std::max(mx, row[v]);
  for (int64_t block = 0; block < vocab; block += kScanBlock) {
    const int64_t end = std::min<int64_t>(vocab, block + kScanBlock);
    int found = 0;
#pragma omp simd reduction(| : found)
    for (int64_t v = block; v < end; ++v) found |= row[v] == mx;
    if (!found) continue;
    for (int64_t v = block; v < end; ++v)
      if (row[v] == mx) return static_cast<int32_t>(v);
  }
  return static_cast<int32_t>(std::max_element(row, row + vocab) - row);  // NaN: as it would
}

// Runs body(i) for i in [0, count) on the thread team, rethrowing the first exception a body
// threw once all are done (an exception may not leave an OpenMP region). A step's rows are
// independent: normalising, restricting and choosing among them in parallel reads each row once,
// while it is in cache.
template <class Body>
void for_each_parallel(int64_t count, int64_t work, Body body) {
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic) if (count > 1 && work >= (int64_t{1} << 15))
  for (int64_t i = 0; i < count; ++i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical(transduce_search_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// The models of an ensemble (one model is an ensemble of one) decoding the same batch: each with
// its own encoder output and decoder cache (`group` rows per sentence) in its own arenas, which
// must outlast the search. A step's log-probabilities combine the members' as `rule` says.
class Members {
 public:
  Members(std::span<Transformer* const> models, std::span<SearchArenas> arenas, const Tensor& src,
          const SearchOptions& o, int64_t group)
      : models_(models.begin(), models.end()), rule_(o.ensemble) {
    const PhaseScope phase(Phase::kEncode);
    if (models_.empty()) fail("a search needs at least one model");
    vocab_ = models_[0]->config().vocab_size;
    for (const Transformer* m : models_)
      if (m->config().vocab_size != vocab_)
        fail("the models of an ensemble must share their vocabulary: {} and {} pieces", vocab_,
             m->config().vocab_size);
    if (arenas.empty()) {
      own_ = std::make_unique<SearchArenas[]>(models_.size());
      arenas = std::span<SearchArenas>(own_.get(), models_.size());
    }
    if (arenas.size() != models_.size())
      fail("{} sets of search arenas for {} models", arenas.size(), models_.size());
    arenas_ = arenas;
    for (int64_t b = 0; b < src.dim(0); ++b) {
      int64_t limit = std::numeric_limits<int64_t>::max();
      for (const Transformer* m : models_)
        limit = std::min(limit, output_limit(m->config(), source_tokens(src, b), o));
      max_len.push_back(limit);
    }
    int64_t capacity = 1;
    for (const int64_t limit : max_len) capacity = std::max(capacity, limit + 1);
    for (size_t m = 0; m < models_.size(); ++m) {
      SearchArenas& a = arenas_[m];
      a.encode.reset();
      Context ctx(a.encode);
      ctx.inference = true;
      const Tensor src_pad = models_[m]->padding_mask(ctx, src);
      const Tensor memory = models_[m]->encode(ctx, src, src_pad);
      caches_.push_back(
          models_[m]->start_decoding(ctx, a.history, memory, src_pad, capacity, group));
    }
  }

  int64_t vocab() const { return vocab_; }

  // Scores [n, V] of the token after each cache row's `tokens` (n of them); they stay valid
  // until the next step. An ensemble's are log-probabilities; a single model's are its logits,
  // which the caller normalises row by row (normalise_row) while each row is in cache.
  Tensor next_scores(std::span<const int32_t> tokens) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    std::vector<Tensor> logp;
    for (size_t m = 0; m < models_.size(); ++m) {
      arenas_[m].step.reset();
      Context ctx(arenas_[m].step);
      ctx.inference = true;
      Tensor in = ctx.alloc({n}, DType::I32);
      std::copy(tokens.begin(), tokens.end(), in.i32());
      Tensor out;
      {
        const PhaseScope phase(Phase::kDecoderOther);
        out = models_[m]->decode_step(ctx, in, caches_[m]);
      }
      if (models_.size() == 1) return out;
      const PhaseScope phase(Phase::kLogSoftmax);
      ops::log_softmax(out, out);
      logp.push_back(out);
    }
    const PhaseScope phase(Phase::kLogSoftmax);
    if (rule_ == EnsembleMean::kProbabilities)
      ops::log_mean_exp(logp, logp[0]);
    else
      ops::mean(logp, logp[0]);
    return logp[0];
  }

  // Turns a row of next_scores into log-probabilities (an ensemble's already are).
  void normalise_row(float* row) const {
    if (models_.size() == 1) ops::log_softmax_row(row, row, vocab_);
  }

  void select(const std::vector<int32_t>& rows) {
    for (DecoderCache& c : caches_) c.select(rows);
  }

  std::vector<int64_t> max_len;  // each sentence's output limit (EOS excluded), within every model

 private:
  std::vector<Transformer*> models_;
  EnsembleMean rule_;
  std::unique_ptr<SearchArenas[]> own_;
  std::span<SearchArenas> arenas_;
  std::vector<DecoderCache> caches_;
  int64_t vocab_ = 0;
};

}  // namespace

float length_penalty(int64_t length, float alpha) {
  return static_cast<float>(std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha));
}

int64_t max_output_length(int64_t source_tokens, const SearchOptions& o) {
  return std::max<int64_t>(
      0, static_cast<int64_t>(std::floor(o.max_len_a * static_cast<float>(source_tokens))) +
             o.max_len_b);
}

int64_t output_limit(const ModelConfig& config, int64_t source_tokens, const SearchOptions& o) {
  return std::min<int64_t>(max_output_length(source_tokens, o), config.max_positions - 1);
}

std::vector<Hypothesis> greedy_search(std::span<Transformer* const> models, const Tensor& src,
                                      const SearchOptions& o, std::span<SearchArenas> arenas) {
  const PhaseScope phase(Phase::kSearch);
  const int64_t batch = src.dim(0);
  Members members(models, arenas, src, o, 1);
  const int64_t vocab = members.vocab();

  std::vector<Hypothesis> out(batch);
  std::vector<int32_t> active(batch);  // sentence of each cache row
  std::iota(active.begin(), active.end(), 0);
  std::vector<int32_t> last(batch, kBosId);
  std::vector<int32_t> best_of;
  while (!active.empty()) {
    const int64_t n = static_cast<int64_t>(active.size());
    Tensor logp = members.next_scores(last);
    best_of.resize(static_cast<size_t>(n));
    for_each_parallel(n, n * vocab, [&](int64_t r) {
      const int32_t s = active[r];
      float* row = logp.f32() + r * vocab;
      members.normalise_row(row);
      restrict_row(row, vocab, s, out[s].tokens, members.max_len[s], o);
      best_of[r] = first_max(row, vocab);
    });
    std::vector<int32_t> keep_rows, keep_active, keep_last;
    for (int64_t r = 0; r < n; ++r) {
      const int32_t s = active[r];
      const float* row = logp.f32() + r * vocab;
      const int32_t best = best_of[r];
      Hypothesis& h = out[s];
      h.log_prob += row[best];
      if (best == kEosId) {
        h.score = h.log_prob / length_penalty(static_cast<int64_t>(h.tokens.size()) + 1, o.alpha);
        continue;
      }
      h.tokens.push_back(best);
      keep_rows.push_back(static_cast<int32_t>(r));
      keep_active.push_back(s);
      keep_last.push_back(best);
    }
    if (keep_rows.size() != active.size()) members.select(keep_rows);
    active = std::move(keep_active);
    last = std::move(keep_last);
  }
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search(std::span<Transformer* const> models,
                                                 const Tensor& src, const SearchOptions& o,
                                                 std::span<SearchArenas> arenas) {
  const PhaseScope phase(Phase::kSearch);
  if (o.beam < 1) fail("beam must be at least 1, got {}", o.beam);
  if (o.nbest < 1 || o.nbest > o.beam)
    fail("nbest must be between 1 and the beam size {}, got {}", o.beam, o.nbest);
  const int64_t batch = src.dim(0), k = o.beam;
  Members members(models, arenas, src, o, k);
  const int64_t vocab = members.vocab();

  struct Live {
    std::vector<int32_t> tokens;
    float log_prob;
  };
  std::vector<std::vector<Hypothesis>> finished(batch);
  // Live hypotheses of each active sentence, k per sentence, in cache-row order. At the first
  // step the k rows are identical, so only the first may expand.
  std::vector<int32_t> active(batch);
  std::iota(active.begin(), active.end(), 0);
  std::vector<std::vector<Live>> live(batch, std::vector<Live>(k, Live{{}, kBanned}));
  for (auto& l : live) l[0].log_prob = 0;

  struct Candidate {
    float total;
    int32_t beam, token;
  };
  auto better = [](const Candidate& x, const Candidate& y) {
    if (x.total != y.total) return x.total > y.total;
    return x.beam != y.beam ? x.beam < y.beam : x.token < y.token;
  };
  std::vector<int32_t> tokens;
  std::vector<std::vector<int32_t>> parents_of;  // per active sentence: its new beams' parents
  std::vector<char> stops;                       // per active sentence: it is done
  bool first = true;
  while (!active.empty()) {
    // At the first step every row of a sentence's group is BOS alike: one row per sentence is
    // decoded, and the cache shares it with the group (DecoderCache::share_first_position).
    const int64_t group = first ? 1 : k;
    const int64_t count = static_cast<int64_t>(active.size()), n = count * group;
    tokens.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      const Live& l = live[active[r / group]][r % group];
      tokens[r] = l.tokens.empty() ? kBosId : l.tokens.back();
    }
    Tensor logp = members.next_scores(tokens);
    first = false;
    parents_of.assign(static_cast<size_t>(count), {});
    stops.assign(static_cast<size_t>(count), 0);

    // Each sentence's step touches only its own rows, beams and ended hypotheses.
    for_each_parallel(count, n * vocab, [&](int64_t a) {
      const int32_t s = active[a];
      std::vector<Live>& beams = live[s];
      // The best `slots` continuations over all k beams, one for each place not yet taken by an
      // ended hypothesis; those among them that end take their place (the beam narrows as
      // hypotheses end). Each beam's best `slots` tokens are found in one scan of its row, then
      // the k short lists are merged.
      std::vector<Hypothesis>& done = finished[s];
      const int64_t slots = k - static_cast<int64_t>(done.size());
      const size_t top = static_cast<size_t>(slots);
      thread_local std::vector<Candidate> candidates;  // kept per thread from step to step
      candidates.clear();
      for (int64_t j = 0; j < k; ++j) {
        if (!std::isfinite(beams[j].log_prob)) continue;
        float* row = logp.f32() + (a * group + j) * vocab;
        members.normalise_row(row);
        restrict_row(row, vocab, s, beams[j].tokens, members.max_len[s], o);
        const size_t first_kept = candidates.size();
        const float log_prob = beams[j].log_prob;
        // The total a token must beat: the worst kept one's once this beam's list is full, -inf
        // before (which also turns away banned tokens and NaN). The vocabulary is scanned in
        // blocks: one vectorised compare tells whether any token of a block beats it, and only
        // such (rare, once the list is full) blocks are walked token by token.
        float bar = -std::numeric_limits<float>::infinity();
        for (int32_t block = 0; block < vocab; block += kScanBlock) {
          const int32_t end = std::min<int32_t>(static_cast<int32_t>(vocab), block + kScanBlock);
          int any = 0;
#pragma omp simd reduction(| : any)
          for (int32_t v = block; v < end; ++v) any |= log_prob + row[v] > bar;
          if (!any) continue;
          for (int32_t v = block; v < end; ++v) {
            const float total = log_prob + row[v];
            // Tokens come in increasing order: a tie with the worst kept one loses to it.
            if (!(total > bar) || !std::isfinite(row[v])) continue;
            const bool full = candidates.size() - first_kept == top;
            if (full) candidates.pop_back();
            const Candidate c{total, static_cast<int32_t>(j), v};
            candidates.insert(
                std::upper_bound(candidates.begin() + static_cast<std::ptrdiff_t>(first_kept),
                                 candidates.end(), c, better),
                c);
            if (candidates.size() - first_kept == top) bar = candidates.back().total;
          }
        }
      }
      std::sort(candidates.begin(), candidates.end(), better);
      const size_t top_all = std::min(candidates.size(), top);

      std::vector<Live> next;
      std::vector<int32_t>& parents = parents_of[a];
      for (size_t c = 0; c < top_all; ++c) {
        const Candidate& cand = candidates[c];
        const Live& parent = beams[cand.beam];
        if (cand.token == kEosId) {
          const int64_t len = static_cast<int64_t>(parent.tokens.size()) + 1;
          done.push_back({parent.tokens, cand.total, cand.total / length_penalty(len, o.alpha)});
          continue;
        }
        Live l{parent.tokens, cand.total};
        l.tokens.push_back(cand.token);
        next.push_back(std::move(l));
        parents.push_back(cand.beam);
      }

      // Done when no place is left, or when none of the live hypotheses can beat the n-th best
      // ended one: a live score only falls, and is divided by at most lp(max_len + 1).
      std::sort(done.begin(), done.end(),
                [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      bool stop = next.empty();
      if (!stop && static_cast<int64_t>(done.size()) >= o.nbest) {
        const float bound = next.front().log_prob / length_penalty(members.max_len[s] + 1, o.alpha);
        stop = bound <= done[o.nbest - 1].score;
      }
      stops[a] = stop;
      if (stop) return;
      while (static_cast<int64_t>(next.size()) < k) {  // too few continuations: pad with dead beams
        next.push_back(Live{{}, kBanned});
        parents.push_back(0);
      }
      beams = std::move(next);
    });

    std::vector<int32_t> keep_rows, keep_active;
    for (int64_t a = 0; a < count; ++a) {
      if (stops[a]) continue;
      for (int64_t j = 0; j < k; ++j)
        keep_rows.push_back(static_cast<int32_t>(a * k + parents_of[a][j]));
      keep_active.push_back(active[a]);
    }
    if (!keep_active.empty()) members.select(keep_rows);
    active = std::move(keep_active);
  }

  for (auto& done : finished) {
    std::sort(done.begin(), done.end(),
              [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    if (static_cast<int64_t>(done.size()) > o.nbest) done.resize(o.nbest);
  }
  return finished;
}

}  // namespace transduce
