#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "ops/ops.h"
#include "text/special_ids.h"

namespace transduce {

namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

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

// The models of an ensemble (one model is an ensemble of one) decoding the same batch: each with
// its own encoder output and decoder cache (`group` rows per sentence) in its own arenas, which
// must outlast the search. A step's log-probabilities combine the members' as `rule` says.
class Members {
 public:
  Members(std::span<Transformer* const> models, std::span<SearchArenas> arenas, const Tensor& src,
          const SearchOptions& o, int64_t group)
      : models_(models.begin(), models.end()), rule_(o.ensemble) {
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

  // Log-probabilities [n, V] of the token after each cache row's `tokens` (n of them); they stay
  // valid until the next step.
  Tensor next_log_probs(std::span<const int32_t> tokens) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    std::vector<Tensor> logp;
    for (size_t m = 0; m < models_.size(); ++m) {
      arenas_[m].step.reset();
      Context ctx(arenas_[m].step);
      ctx.inference = true;
      Tensor in = ctx.alloc({n}, DType::I32);
      std::copy(tokens.begin(), tokens.end(), in.i32());
      Tensor out = models_[m]->decode_step(ctx, in, caches_[m]);
      ops::log_softmax(out, out);
      logp.push_back(out);
    }
    if (logp.size() > 1) {
      if (rule_ == EnsembleMean::kProbabilities)
        ops::log_mean_exp(logp, logp[0]);
      else
        ops::mean(logp, logp[0]);
    }
    return logp[0];
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
  const int64_t batch = src.dim(0);
  Members members(models, arenas, src, o, 1);
  const int64_t vocab = members.vocab();

  std::vector<Hypothesis> out(batch);
  std::vector<int32_t> active(batch);  // sentence of each cache row
  std::iota(active.begin(), active.end(), 0);
  std::vector<int32_t> last(batch, kBosId);
  while (!active.empty()) {
    const int64_t n = static_cast<int64_t>(active.size());
    Tensor logp = members.next_log_probs(last);
    std::vector<int32_t> keep_rows, keep_active, keep_last;
    for (int64_t r = 0; r < n; ++r) {
      const int32_t s = active[r];
      float* row = logp.f32() + r * vocab;
      restrict_row(row, vocab, s, out[s].tokens, members.max_len[s], o);
      const int32_t best = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
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
  std::vector<Candidate> candidates;
  std::vector<int32_t> tokens;
  while (!active.empty()) {
    const int64_t n = static_cast<int64_t>(active.size()) * k;
    tokens.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      const Live& l = live[active[r / k]][r % k];
      tokens[r] = l.tokens.empty() ? kBosId : l.tokens.back();
    }
    Tensor logp = members.next_log_probs(tokens);

    std::vector<int32_t> keep_rows, keep_active;
    for (size_t a = 0; a < active.size(); ++a) {
      const int32_t s = active[a];
      std::vector<Live>& beams = live[s];
      // The best `slots` continuations over all k beams, one for each place not yet taken by an
      // ended hypothesis; those among them that end take their place (the beam narrows as
      // hypotheses end). Each beam's best `slots` tokens are found in one scan of its row, then
      // the k short lists are merged.
      std::vector<Hypothesis>& done = finished[s];
      const int64_t slots = k - static_cast<int64_t>(done.size());
      const size_t top = static_cast<size_t>(slots);
      auto better = [](const Candidate& x, const Candidate& y) {
        if (x.total != y.total) return x.total > y.total;
        return x.beam != y.beam ? x.beam < y.beam : x.token < y.token;
      };
      candidates.clear();
      for (int64_t j = 0; j < k; ++j) {
        if (!std::isfinite(beams[j].log_prob)) continue;
        float* row = logp.f32() + (static_cast<int64_t>(a) * k + j) * vocab;
        restrict_row(row, vocab, s, beams[j].tokens, members.max_len[s], o);
        const size_t first = candidates.size();
        const float log_prob = beams[j].log_prob;
        // The total a token must beat: the worst kept one's once this beam's list is full, -inf
        // before (which also turns away banned tokens and NaN). Kept in a register, so that the
        // scan over the vocabulary is a compare per token.
        float bar = -std::numeric_limits<float>::infinity();
        for (int32_t v = 0; v < vocab; ++v) {
          const float total = log_prob + row[v];
          // Tokens come in increasing order: a tie with the worst kept one loses to it.
          if (!(total > bar) || !std::isfinite(row[v])) continue;
          const bool full = candidates.size() - first == top;
          if (full) candidates.pop_back();
          const Candidate c{total, static_cast<int32_t>(j), v};
          candidates.insert(
              std::upper_bound(candidates.begin() + static_cast<std::ptrdiff_t>(first),
                               candidates.end(), c, better),
              c);
          if (candidates.size() - first == top) bar = candidates.back().total;
        }
      }
      std::sort(candidates.begin(), candidates.end(), better);
      const size_t top_all = std::min(candidates.size(), top);

      std::vector<Live> next;
      std::vector<int32_t> parents;
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
      if (stop) continue;
      while (static_cast<int64_t>(next.size()) < k) {  // too few continuations: pad with dead beams
        next.push_back(Live{{}, kBanned});
        parents.push_back(0);
      }
      for (int64_t j = 0; j < k; ++j)
        keep_rows.push_back(static_cast<int32_t>(static_cast<int64_t>(a) * k + parents[j]));
      keep_active.push_back(s);
      beams = std::move(next);
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
