#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "core/phase_clock.h"
#include "core/rng.h"
#include "decode/lexical_constraints.h"
#include "decode/search_options.h"
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
  // `capacity`: the most positions a row decodes (EOS counted).
  Members(std::span<Transformer* const> models, std::span<SearchArenas> arenas, const Tensor& src,
          const SearchOptions& o, int64_t group, int64_t capacity)
      : models_(models.begin(), models.end()), rule_(o.ensemble) {
    const PhaseScope phase(Phase::kEncode);
    vocab_ = models_[0]->config().vocab_size;
    if (arenas.empty()) {
      own_ = std::make_unique<SearchArenas[]>(models_.size());
      arenas = std::span<SearchArenas>(own_.get(), models_.size());
    }
    if (arenas.size() != models_.size())
      fail("{} sets of search arenas for {} models", arenas.size(), models_.size());
    arenas_ = arenas;
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

 private:
  std::vector<Transformer*> models_;
  EnsembleMean rule_;
  std::unique_ptr<SearchArenas[]> own_;
  std::span<SearchArenas> arenas_;
  std::vector<DecoderCache> caches_;
  int64_t vocab_ = 0;
};

// A continuation: `total` is its hypothesis's log-probability with the token's (`step`) added.
struct Candidate {
  float total;
  int32_t beam, token;
  float step;
};
bool better(const Candidate& x, const Candidate& y) {
  if (x.total != y.total) return x.total > y.total;
  return x.beam != y.beam ? x.beam < y.beam : x.token < y.token;
}

// Appends to `out` the best `m` of offset + row[v] over the finite entries of the row, best first
// (a tie goes to the lower token), tagged with `beam`. The vocabulary is scanned in blocks: one
// vectorised compare tells whether any token of a block beats the worst kept one (-inf until m
// are kept, which also turns away banned tokens and NaN), and only such blocks, rare once the
// list is full, are walked token by token.
void best_tokens(const float* row, int32_t vocab, size_t m, float offset, int32_t beam,
                 std::vector<Candidate>& out) {
  if (m == 0) return;
  const size_t first_kept = out.size();
  const auto begin = [&] { return out.begin() + static_cast<std::ptrdiff_t>(first_kept); };
  float bar = -std::numeric_limits<float>::infinity();
  for (int32_t block = 0; block < vocab; block += kScanBlock) {
    const int32_t end = std::min(vocab, block + kScanBlock);
    int any = 0;
#pragma omp simd reduction(| : any)
    for (int32_t v = block; v < end; ++v) any |= offset + row[v] > bar;
    if (!any) continue;
    for (int32_t v = block; v < end; ++v) {
      const float total = offset + row[v];
      // Tokens come in increasing order: a tie with the worst kept one loses to it.
      if (!(total > bar) || !std::isfinite(row[v])) continue;
      if (out.size() - first_kept == m) out.pop_back();
      const Candidate c{total, beam, v, row[v]};
      out.insert(std::upper_bound(begin(), out.end(), c, better), c);
      if (out.size() - first_kept == m) bar = out.back().total;
    }
  }
}

// What every step of every search does to a hypothesis's row of scores before a choice is made,
// and each sentence's length limits and prefix.
class StepRules {
 public:
  StepRules(std::span<Transformer* const> models, const Tensor& src, const SearchOptions& o,
            std::span<const SentenceControls> controls)
      : o_(o), controls_(controls) {
    if (models.empty()) fail("a search needs at least one model");
    vocab_ = models[0]->config().vocab_size;
    for (const Transformer* m : models)
      if (m->config().vocab_size != vocab_)
        fail("the models of an ensemble must share their vocabulary: {} and {} pieces", vocab_,
             m->config().vocab_size);
    const int64_t batch = src.dim(0);
    if (!controls.empty() && static_cast<int64_t>(controls.size()) != batch)
      fail("{} sentence controls for a batch of {} sentences", controls.size(), batch);
    int64_t positions = std::numeric_limits<int64_t>::max();  // tokens before EOS, every model
    for (const Transformer* m : models)
      positions = std::min<int64_t>(positions, m->config().max_positions - 1);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t n = source_tokens(src, b);
      int64_t limit = std::numeric_limits<int64_t>::max();
      for (const Transformer* m : models) limit = std::min(limit, output_limit(m->config(), n, o));
      const std::vector<int32_t>& p = prefix(b);
      for (const int32_t t : p)
        if (t <= kEosId || t >= vocab_)
          fail("a target prefix may hold pieces {} to {}, not {}", kEosId + 1, vocab_ - 1, t);
      const int64_t forced = static_cast<int64_t>(p.size());
      if (forced > positions)
        fail("a target prefix of {} pieces: the model's outputs hold at most {}", forced,
             positions);
      max_len_.push_back(std::max(limit, forced));
      min_len_.push_back(std::min(min_output_length(n, o), max_len_.back()));
      std::vector<std::vector<int32_t>> phrases;
      if (!controls.empty()) phrases = controls[b].constraints;
      for (const std::vector<int32_t>& phrase : phrases)
        for (const int32_t t : phrase)
          if (t <= kEosId || t >= vocab_)
            fail("a constraint may hold pieces {} to {}, not {}", kEosId + 1, vocab_ - 1, t);
      constraints_.emplace_back(std::move(phrases));
    }
  }

  const LexicalConstraints& constraints(int64_t s) const { return constraints_[s]; }

  int64_t vocab() const { return vocab_; }
  int64_t max_len(int64_t s) const { return max_len_[s]; }  // output tokens, EOS excluded
  // The most positions any row decodes (EOS counted).
  int64_t capacity() const {
    int64_t c = 1;
    for (const int64_t m : max_len_) c = std::max(c, m + 1);
    return c;
  }
  const std::vector<int32_t>& prefix(int64_t s) const {
    static const std::vector<int32_t> none;
    return controls_.empty() ? none : controls_[s].prefix;
  }
  uint64_t id(int64_t s) const { return controls_.empty() ? 0 : controls_[s].id; }

  // Turns `row`, the scores of the token after `tokens` (sentence s), into the log-probabilities
  // a choice is made from: the repetition penalty, normalisation (`members`), then the forced
  // prefix, or the bans: PAD and BOS, repeated n-grams, EOS below the minimum length, the caller's
  // constraint, and at the length limit everything but EOS.
  template <class Normaliser>
  void apply(float* row, int64_t s, std::span<const int32_t> tokens,
             const Normaliser& members) const {
    const int64_t step = static_cast<int64_t>(tokens.size());
    if (o_.repetition_penalty != 1.0f && !tokens.empty()) {
      penalise_repeats(row, tokens);
      ops::log_softmax_row(row, row, vocab_);  // an ensemble's rows too: they changed
    } else {
      members.normalise_row(row);
    }
    const std::vector<int32_t>& forced = prefix(s);
    if (step < static_cast<int64_t>(forced.size())) {
      const int32_t t = forced[step];
      const float keep = row[t];
      std::fill(row, row + vocab_, kBanned);
      row[t] = keep;
      return;
    }
    row[kPadId] = kBanned;
    row[kBosId] = kBanned;
    if (o_.no_repeat_ngram > 0) ban_repeated_ngrams(row, tokens);
    if (step < min_len_[s]) row[kEosId] = kBanned;
    if (o_.constrain) o_.constrain(s, tokens, row);
    if (step >= max_len_[s]) {
      const float eos = row[kEosId];
      std::fill(row, row + vocab_, kBanned);
      row[kEosId] = std::isfinite(eos) ? eos : 0.0f;
    }
  }

 private:
  // CTRL's penalty, once for each distinct token of the output so far.
  void penalise_repeats(float* row, std::span<const int32_t> tokens) const {
    thread_local std::vector<int32_t> seen;
    seen.assign(tokens.begin(), tokens.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    const float r = o_.repetition_penalty;
    for (const int32_t t : seen) row[t] = row[t] > 0 ? row[t] / r : row[t] * r;
  }

  // Bans each token that would end an n-gram the output already holds: wherever the last n - 1
  // tokens occurred before, the token that followed them then.
  void ban_repeated_ngrams(float* row, std::span<const int32_t> tokens) const {
    const int64_t n = o_.no_repeat_ngram, length = static_cast<int64_t>(tokens.size());
    if (length < n) return;
    const int32_t* tail = tokens.data() + length - (n - 1);
    for (int64_t i = 0; i + n <= length; ++i)
      if (std::equal(tail, tail + (n - 1), tokens.data() + i)) row[tokens[i + n - 1]] = kBanned;
  }

  const SearchOptions& o_;
  std::span<const SentenceControls> controls_;
  int64_t vocab_ = 0;
  std::vector<int64_t> max_len_, min_len_;  // output tokens, EOS excluded
  std::vector<LexicalConstraints> constraints_;
};

// A number in [0, 1) from (seed, sentence id, sample, step) alone: the same whatever the batch
// or the thread that draws it.
double uniform_draw(int64_t seed, uint64_t id, int64_t sample, int64_t step) {
  const uint64_t stream = hash_u64(static_cast<uint64_t>(seed), id, static_cast<uint64_t>(sample));
  return static_cast<double>(hash_u64(stream, 0x5A4D1E5EEDull, static_cast<uint64_t>(step)) >> 11) *
         0x1.0p-53;
}

// A token drawn from a row of log-probabilities as o.sampling and o.temperature say, by `u`: the
// kept tokens are ordered by probability (then id), and the first whose cumulative share of
// their total exceeds u is taken.
int32_t sample_token(const float* row, int32_t vocab, const SearchOptions& o, double u) {
  thread_local std::vector<Candidate> kept;
  kept.clear();
  if (o.sampling.kind == Sampling::Kind::kTopK) {
    best_tokens(row, vocab, static_cast<size_t>(o.sampling.k), 0.0f, 0, kept);
  } else {
    for (int32_t v = 0; v < vocab; ++v)
      if (std::isfinite(row[v])) kept.push_back({row[v], 0, v, row[v]});
    std::sort(kept.begin(), kept.end(), better);
  }
  if (kept.empty()) return kEosId;  // nothing allowed: cannot happen past the length rules
  thread_local std::vector<double> weight;
  weight.resize(kept.size());
  const double top = kept[0].total, inverse_t = 1.0 / static_cast<double>(o.temperature);
  double sum = 0;
  for (size_t i = 0; i < kept.size(); ++i)
    sum += weight[i] = std::exp((kept[i].total - top) * inverse_t);
  if (o.sampling.kind == Sampling::Kind::kTopP) {
    // The fewest most probable tokens whose probabilities sum to at least p.
    const double want = static_cast<double>(o.sampling.p) * sum;
    double cumulative = 0;
    size_t m = 0;
    while (m < kept.size()) {
      cumulative += weight[m++];
      if (cumulative >= want) break;
    }
    kept.resize(m);
    sum = cumulative;
  }
  const double target = u * sum;
  double cumulative = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    cumulative += weight[i];
    if (cumulative > target) return kept[i].token;
  }
  return kept.back().token;
}

// Adds to `candidates` (those from `first` on are beam j's) the tokens that take one of the beam's
// unmet constraints a step further, or EOS once all are met, where its row allows them and they
// are not there already.
template <class Live>
void add_advancing(const LexicalConstraints& constraints, const Live& beam, const float* row,
                   int64_t j, size_t first, std::vector<Candidate>& candidates) {
  thread_local std::vector<int32_t> tokens;
  tokens.clear();
  constraints.advancing_tokens(beam.met, beam.tokens, tokens);
  if (beam.met == constraints.all()) tokens.push_back(kEosId);
  for (const int32_t t : tokens) {
    if (!std::isfinite(row[t])) continue;
    bool there = false;
    for (size_t i = first; i < candidates.size(); ++i) there |= candidates[i].token == t;
    if (!there) candidates.push_back({beam.log_prob + row[t], static_cast<int32_t>(j), t, row[t]});
  }
}

// Dynamic beam allocation over `candidates` (best first): every ending is finished (EOS is only
// allowed once all constraints are met); of the others, each bank (the constraint tokens
// produced, 0 to C) takes its best up to its quota, k / (C + 1) each and the remainder to the
// fullest banks, a bank short of candidates passing its places down, and the places left go to
// the best candidates not taken.
template <class Live, class Finish, class GoOn>
void allocate_banks(const LexicalConstraints& constraints, const std::vector<Live>& beams,
                    const std::vector<Candidate>& candidates, int64_t k, Finish finish,
                    GoOn go_on) {
  const int64_t banks = constraints.total_tokens() + 1;
  thread_local std::vector<uint64_t> met;
  thread_local std::vector<int64_t> bank_of;  // -1: an ending
  met.assign(candidates.size(), 0);
  bank_of.assign(candidates.size(), -1);
  std::vector<int64_t> quota(static_cast<size_t>(banks), k / banks), offered(quota.size(), 0);
  for (int64_t b = banks - 1, extra = k % banks; extra > 0; --b, --extra) ++quota[b];
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.token == kEosId) continue;
    const Live& parent = beams[c.beam];
    met[i] = constraints.met_after(parent.met, parent.tokens, c.token);
    bank_of[i] = constraints.progress(met[i], parent.tokens, c.token);
    ++offered[bank_of[i]];
  }
  // A bank with fewer candidates than places passes the rest down to the bank below it.
  for (int64_t b = banks - 1; b > 0; --b)
    if (offered[b] < quota[b]) {
      quota[b - 1] += quota[b] - offered[b];
      quota[b] = offered[b];
    }
  int64_t taken = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (bank_of[i] < 0) {
      finish(candidates[i]);
    } else if (taken < k && quota[bank_of[i]] > 0) {
      --quota[bank_of[i]];
      ++taken;
      go_on(candidates[i], met[i]);
      bank_of[i] = -2;  // taken
    }
  }
  // Places still empty: the best candidates not taken.
  for (size_t i = 0; i < candidates.size() && taken < k; ++i)
    if (bank_of[i] >= 0) {
      ++taken;
      go_on(candidates[i], met[i]);
    }
}

// Each hypothesis on its own, `group` of them per sentence, each taking one token a step: the most
// probable one (greedy search), or a random draw (sampling on), and with `branch` the group's
// j-th most probable at the first position after the prefix (alternatives). Hypotheses that could
// not branch (fewer allowed tokens than the group) are left out. A sentence stays in the batch
// until all its hypotheses have ended.
std::vector<std::vector<Hypothesis>> independent_search(std::span<Transformer* const> models,
                                                        const Tensor& src, const SearchOptions& o,
                                                        std::span<SearchArenas> arenas,
                                                        std::span<const SentenceControls> controls,
                                                        int64_t group, bool sample, bool branch) {
  const PhaseScope phase(Phase::kSearch);
  const int64_t batch = src.dim(0);
  const StepRules rules(models, src, o, controls);
  Members members(models, arenas, src, o, group, rules.capacity());
  const int32_t vocab = static_cast<int32_t>(rules.vocab());

  struct Row {
    Hypothesis h;
    bool ended = false, left_out = false;
  };
  std::vector<std::vector<Row>> rows(batch, std::vector<Row>(static_cast<size_t>(group)));
  std::vector<int32_t> active(batch);  // sentences still decoding, in cache order
  std::iota(active.begin(), active.end(), 0);
  std::vector<int32_t> tokens;
  std::vector<char> stops;
  bool first = true;
  while (!active.empty()) {
    // At the first step every row of a group starts alike from BOS: one row per sentence is
    // decoded, and the cache shares it with the group (DecoderCache::share_first_position).
    const int64_t per = first ? 1 : group;
    const int64_t count = static_cast<int64_t>(active.size()), n = count * per;
    tokens.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      const Hypothesis& h = rows[active[r / per]][r % per].h;
      tokens[r] = h.tokens.empty() ? kBosId : h.tokens.back();
    }
    Tensor logp = members.next_scores(tokens);
    first = false;
    stops.assign(static_cast<size_t>(count), 0);
    for_each_parallel(count, n * vocab, [&](int64_t a) {
      const int32_t s = active[a];
      bool all_ended = true;
      for (int64_t j = 0; j < group; ++j) {
        Row& row = rows[s][j];
        if (row.ended) continue;
        Hypothesis& h = row.h;
        float* data = logp.f32() + (a * per + (per == 1 ? 0 : j)) * vocab;
        if (per > 1 || j == 0) rules.apply(data, s, h.tokens, members);  // a shared row: once
        const int64_t step = static_cast<int64_t>(h.tokens.size());
        int32_t token;
        if (branch && step == static_cast<int64_t>(rules.prefix(s).size())) {
          // Until the branch every row of the group holds the same prefix: the ranking of the
          // first row serves them all.
          thread_local std::vector<Candidate> best;
          if (j == 0) {
            best.clear();
            best_tokens(data, vocab, static_cast<size_t>(group), 0.0f, 0, best);
          }
          if (j >= static_cast<int64_t>(best.size())) {
            row.ended = row.left_out = true;
            continue;
          }
          token = best[j].token;
        } else if (sample) {
          token = sample_token(data, vocab, o, uniform_draw(o.seed, rules.id(s), j, step));
        } else {
          token = first_max(data, vocab);
        }
        h.log_prob += data[token];
        h.token_log_probs.push_back(data[token]);
        if (token == kEosId) {
          row.ended = true;
          h.score = h.log_prob / length_penalty(step + 1, o.alpha);
          continue;
        }
        h.tokens.push_back(token);
        all_ended = false;
      }
      stops[a] = all_ended;
    });

    std::vector<int32_t> keep_rows, keep_active;
    for (int64_t a = 0; a < count; ++a) {
      if (stops[a]) continue;
      for (int64_t j = 0; j < group; ++j) keep_rows.push_back(static_cast<int32_t>(a * group + j));
      keep_active.push_back(active[a]);
    }
    if (!keep_active.empty() && keep_active.size() != active.size()) members.select(keep_rows);
    active = std::move(keep_active);
  }

  std::vector<std::vector<Hypothesis>> out(batch);
  for (int64_t s = 0; s < batch; ++s) {
    for (Row& row : rows[s])
      if (!row.left_out) out[s].push_back(std::move(row.h));
    if (sample && !branch)  // samples best first, as n-best lists are
      std::stable_sort(out[s].begin(), out[s].end(),
                       [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
  }
  return out;
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

int64_t min_output_length(int64_t source_tokens, const SearchOptions& o) {
  return std::max<int64_t>(
      0, static_cast<int64_t>(std::floor(o.min_len_a * static_cast<float>(source_tokens))) +
             o.min_len_b);
}

std::vector<Hypothesis> greedy_search(std::span<Transformer* const> models, const Tensor& src,
                                      const SearchOptions& o, std::span<SearchArenas> arenas,
                                      std::span<const SentenceControls> controls) {
  std::vector<Hypothesis> out;
  for (std::vector<Hypothesis>& h :
       independent_search(models, src, o, arenas, controls, 1, false, false))
    out.push_back(std::move(h.front()));
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search(std::span<Transformer* const> models,
                                                 const Tensor& src, const SearchOptions& o,
                                                 std::span<SearchArenas> arenas,
                                                 std::span<const SentenceControls> controls) {
  const PhaseScope phase(Phase::kSearch);
  if (o.beam < 1) fail("beam must be at least 1, got {}", o.beam);
  if (o.nbest < 1 || o.nbest > o.beam)
    fail("nbest must be between 1 and the beam size {}, got {}", o.beam, o.nbest);
  const int64_t batch = src.dim(0), k = o.beam;
  const StepRules rules(models, src, o, controls);
  Members members(models, arenas, src, o, k, rules.capacity());
  const int32_t vocab = static_cast<int32_t>(rules.vocab());

  struct Live {
    std::vector<int32_t> tokens;
    std::vector<float> token_log_probs;
    float log_prob;
    uint64_t met = 0;  // the constraints met
  };
  std::vector<std::vector<Hypothesis>> finished(batch);  // each sentence's best nbest, best first
  // Live hypotheses of each active sentence, k per sentence, in cache-row order; a dead one has
  // log_prob -inf. At the first step only the first is alive (the k rows are identical).
  std::vector<int32_t> active(batch);
  std::iota(active.begin(), active.end(), 0);
  std::vector<std::vector<Live>> live(batch, std::vector<Live>(k, Live{{}, {}, kBanned, 0}));
  for (auto& l : live) l[0].log_prob = 0;

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
      std::vector<Hypothesis>& done = finished[s];
      // The best 2k continuations over all live beams: each beam's best 2k tokens from one scan of
      // its row, then the short lists merged. With at most one EOS per beam, k of them at least
      // do not end.
      thread_local std::vector<Candidate> candidates;  // kept per thread from step to step
      candidates.clear();
      const LexicalConstraints& constraints = rules.constraints(s);
      for (int64_t j = 0; j < k; ++j) {
        if (!std::isfinite(beams[j].log_prob)) continue;
        float* row = logp.f32() + (a * group + j) * vocab;
        rules.apply(row, s, beams[j].tokens, members);
        const size_t first_of_beam = candidates.size();
        if (!constraints.empty() && beams[j].met != constraints.all()) row[kEosId] = kBanned;
        best_tokens(row, vocab, static_cast<size_t>(2 * k), beams[j].log_prob,
                    static_cast<int32_t>(j), candidates);
        if (!constraints.empty())
          add_advancing(constraints, beams[j], row, j, first_of_beam, candidates);
      }
      std::sort(candidates.begin(), candidates.end(), better);

      std::vector<Live> next;
      std::vector<int32_t>& parents = parents_of[a];
      const auto finish = [&](const Candidate& cand) {
        const Live& parent = beams[cand.beam];
        const int64_t len = static_cast<int64_t>(parent.tokens.size()) + 1;
        Hypothesis h{parent.tokens, cand.total, cand.total / length_penalty(len, o.alpha),
                     parent.token_log_probs};
        h.token_log_probs.push_back(cand.step);
        done.push_back(std::move(h));
      };
      const auto go_on = [&](const Candidate& cand, uint64_t met) {
        const Live& parent = beams[cand.beam];
        Live l{parent.tokens, parent.token_log_probs, cand.total, met};
        l.tokens.push_back(cand.token);
        l.token_log_probs.push_back(cand.step);
        next.push_back(std::move(l));
        parents.push_back(cand.beam);
      };
      if (constraints.empty()) {
        // Those among the first k that end are finished; the best k that do not go on.
        for (size_t c = 0; c < candidates.size() && static_cast<int64_t>(next.size()) < k; ++c) {
          if (candidates[c].token != kEosId)
            go_on(candidates[c], 0);
          else if (static_cast<int64_t>(c) < k)
            finish(candidates[c]);
        }
      } else {
        allocate_banks(constraints, beams, candidates, k, finish, go_on);
      }

      // Done when nothing goes on, or when none of the live hypotheses can beat the n-th best
      // ended one: a live score only falls, and is divided by at most lp(max_len + 1).
      std::stable_sort(done.begin(), done.end(),
                       [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      if (static_cast<int64_t>(done.size()) > o.nbest) done.resize(o.nbest);
      bool stop = next.empty();
      if (!stop && static_cast<int64_t>(done.size()) >= o.nbest) {
        float best = kBanned;  // with banks, the next live ones are not in score order
        for (const Live& l : next) best = std::max(best, l.log_prob);
        const float bound = best / length_penalty(rules.max_len(s) + 1, o.alpha);
        stop = bound <= done[o.nbest - 1].score;
      }
      stops[a] = stop;
      if (stop) return;
      while (static_cast<int64_t>(next.size()) < k) {  // too few continuations: pad with dead beams
        next.push_back(Live{{}, {}, kBanned, 0});
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
  return finished;
}

std::vector<std::vector<Hypothesis>> search(std::span<Transformer* const> models, const Tensor& src,
                                            const SearchOptions& o, std::span<SearchArenas> arenas,
                                            std::span<const SentenceControls> controls) {
  check_search_options(o);
  const bool constrained = std::any_of(controls.begin(), controls.end(),
                                       [](const auto& c) { return !c.constraints.empty(); });
  if (constrained && (o.alternatives > 0 || o.sampling.on()))
    fail("constraints need beam search: not with sampling or alternatives");
  if (constrained) return beam_search(models, src, o, arenas, controls);
  if (o.alternatives > 0)
    return independent_search(models, src, o, arenas, controls, o.alternatives, o.sampling.on(),
                              true);
  if (o.sampling.on())
    return independent_search(models, src, o, arenas, controls, o.nbest, true, false);
  if (o.beam == 1 && o.nbest == 1)
    return independent_search(models, src, o, arenas, controls, 1, false, false);
  return beam_search(models, src, o, arenas, controls);
}

}  // namespace transduce
