#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "ops/ops.h"
#include "train/example.h"

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

struct Encoded {
  DecoderCache cache;
  std::vector<int64_t> max_len;
};

// The encoder pass and the decoder cache (`group` rows per sentence), in the encode and history
// arenas, which start empty and must outlast the search.
Encoded encode(Transformer& model, SearchArenas& arenas, const Tensor& src, const SearchOptions& o,
               int64_t group) {
  arenas.encode.reset();
  Context ctx(arenas.encode);
  ctx.inference = true;
  Encoded e;
  const Tensor src_pad = model.padding_mask(ctx, src);
  const Tensor memory = model.encode(ctx, src, src_pad);
  int64_t capacity = 1;
  for (int64_t b = 0; b < src.dim(0); ++b) {
    e.max_len.push_back(output_limit(model.config(), source_tokens(src, b), o));
    capacity = std::max(capacity, e.max_len.back() + 1);
  }
  e.cache = model.start_decoding(ctx, arenas.history, memory, src_pad, capacity, group);
  return e;
}

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

std::vector<Hypothesis> greedy_search(Transformer& model, const Tensor& src, const SearchOptions& o,
                                      SearchArenas* arenas) {
  const int64_t batch = src.dim(0), vocab = model.config().vocab_size;
  SearchArenas own;
  SearchArenas& use = arenas ? *arenas : own;
  Encoded enc = encode(model, use, src, o, 1);
  DecoderCache& cache = enc.cache;

  std::vector<Hypothesis> out(batch);
  std::vector<int32_t> active(batch);  // sentence of each cache row
  std::iota(active.begin(), active.end(), 0);
  std::vector<int32_t> last(batch, kBosId);
  while (!active.empty()) {
    use.step.reset();
    Context ctx(use.step);
    ctx.inference = true;
    const int64_t n = static_cast<int64_t>(active.size());
    Tensor tokens = ctx.alloc({n}, DType::I32);
    std::copy(last.begin(), last.end(), tokens.i32());
    Tensor logp = model.decode_step(ctx, tokens, cache);
    ops::log_softmax(logp, logp);
    std::vector<int32_t> keep_rows, keep_active, keep_last;
    for (int64_t r = 0; r < n; ++r) {
      const int32_t s = active[r];
      float* row = logp.f32() + r * vocab;
      restrict_row(row, vocab, s, out[s].tokens, enc.max_len[s], o);
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
    if (keep_rows.size() != active.size()) cache.select(keep_rows);
    active = std::move(keep_active);
    last = std::move(keep_last);
  }
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search(Transformer& model, const Tensor& src,
                                                 const SearchOptions& o, SearchArenas* arenas) {
  if (o.beam < 1) fail("--beam must be at least 1, got {}", o.beam);
  if (o.nbest < 1 || o.nbest > o.beam)
    fail("--nbest must be between 1 and the beam size {}, got {}", o.beam, o.nbest);
  const int64_t batch = src.dim(0), vocab = model.config().vocab_size, k = o.beam;
  SearchArenas own;
  SearchArenas& use = arenas ? *arenas : own;
  Encoded enc = encode(model, use, src, o, k);
  DecoderCache& cache = enc.cache;

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
  while (!active.empty()) {
    use.step.reset();
    Context ctx(use.step);
    ctx.inference = true;
    const int64_t n = static_cast<int64_t>(active.size()) * k;
    Tensor tokens = ctx.alloc({n}, DType::I32);
    for (int64_t r = 0; r < n; ++r) {
      const Live& l = live[active[r / k]][r % k];
      tokens.i32()[r] = l.tokens.empty() ? kBosId : l.tokens.back();
    }
    Tensor logp = model.decode_step(ctx, tokens, cache);
    ops::log_softmax(logp, logp);

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
        restrict_row(row, vocab, s, beams[j].tokens, enc.max_len[s], o);
        const size_t first = candidates.size();
        for (int32_t v = 0; v < vocab; ++v) {
          const float total = beams[j].log_prob + row[v];
          // Tokens come in increasing order: a tie with the worst kept one loses to it.
          const bool full = candidates.size() - first == top;
          if (!std::isfinite(row[v]) || (full && total <= candidates.back().total)) continue;
          if (full) candidates.pop_back();
          const Candidate c{total, static_cast<int32_t>(j), v};
          candidates.insert(
              std::upper_bound(candidates.begin() + static_cast<std::ptrdiff_t>(first),
                               candidates.end(), c, better),
              c);
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
        const float bound = next.front().log_prob / length_penalty(enc.max_len[s] + 1, o.alpha);
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
    if (!keep_active.empty()) cache.select(keep_rows);
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
