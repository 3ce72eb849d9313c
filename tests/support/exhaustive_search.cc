#include "support/exhaustive_search.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/arena.h"
#include "model/context.h"
#include "text/special_ids.h"

namespace transduce::testing {

double gnmt_lp(int64_t length_with_eos, double alpha) {
  return std::pow((5.0 + static_cast<double>(length_with_eos)) / 6.0, alpha);
}

bool close(double got, double want, double rel) {
  return std::abs(got - want) <= rel * std::max(1.0, std::abs(want));
}

namespace {

// One model's log-softmax over every position of every row, in double.
std::vector<double> model_log_probs(Transformer& model, const Tokens& src,
                                    const std::vector<Tokens>& tgt_in) {
  const int64_t rows = static_cast<int64_t>(tgt_in.size());
  const int64_t ls = static_cast<int64_t>(src.size()), lt = static_cast<int64_t>(tgt_in[0].size());
  const int64_t vocab = model.config().vocab_size;
  Tensor src_ids = Tensor::empty({rows, ls}, DType::I32);
  Tensor tgt_ids = Tensor::empty({rows, lt}, DType::I32);
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(src.begin(), src.end(), src_ids.i32() + r * ls);
    if (static_cast<int64_t>(tgt_in[r].size()) != lt)
      throw std::invalid_argument("teacher_forced_log_probs: rows of different lengths");
    std::copy(tgt_in[r].begin(), tgt_in[r].end(), tgt_ids.i32() + r * lt);
  }
  Arena arena;
  Context ctx(arena);
  const Tensor src_pad = model.padding_mask(ctx, src_ids);
  const Tensor memory = model.encode(ctx, src_ids, src_pad);
  const Tensor logits =
      model.decode(ctx, tgt_ids, ctx.zeros({rows, lt}, DType::U8), memory, src_pad);
  std::vector<double> out(static_cast<size_t>(rows * lt * vocab));
  for (int64_t p = 0; p < rows * lt; ++p) {
    const float* x = logits.f32() + p * vocab;
    const double top = *std::max_element(x, x + vocab);
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v) sum += std::exp(x[v] - top);
    for (int64_t v = 0; v < vocab; ++v) out[p * vocab + v] = x[v] - top - std::log(sum);
  }
  return out;
}

}  // namespace

std::vector<double> teacher_forced_log_probs(std::span<Transformer* const> models,
                                             const Tokens& src, const std::vector<Tokens>& tgt_in,
                                             EnsembleMean rule) {
  if (models.size() == 1) return model_log_probs(*models[0], src, tgt_in);
  const bool probs = rule == EnsembleMean::kProbabilities;
  const double share = 1.0 / static_cast<double>(models.size());
  std::vector<double> sum;
  for (Transformer* m : models) {
    const std::vector<double> logp = model_log_probs(*m, src, tgt_in);
    if (sum.empty()) sum.assign(logp.size(), 0.0);
    for (size_t i = 0; i < logp.size(); ++i)
      sum[i] += share * (probs ? std::exp(logp[i]) : logp[i]);
  }
  if (probs)
    for (double& p : sum) p = std::log(p);
  return sum;
}

double full_pass_log_prob(std::span<Transformer* const> models, const Tokens& src,
                          const Tokens& tokens, EnsembleMean rule) {
  Tokens tgt_in{kBosId};
  tgt_in.insert(tgt_in.end(), tokens.begin(), tokens.end());
  const std::vector<double> logp = teacher_forced_log_probs(models, src, {tgt_in}, rule);
  const int64_t vocab = models[0]->config().vocab_size;
  double sum = 0;
  for (size_t i = 0; i <= tokens.size(); ++i)
    sum += logp[i * vocab + (i < tokens.size() ? tokens[i] : kEosId)];
  return sum;
}

// The log-probabilities come from one teacher-forced pass over all full-length sequences:
// position t of the sequence that continues a prefix of t tokens with the first word gives that
// prefix's EOS probability.
std::vector<Output> every_output(std::span<Transformer* const> models, const Tokens& src,
                                 int64_t max_len, EnsembleMean rule) {
  const int64_t vocab = models[0]->config().vocab_size;
  const int64_t words = vocab - 3;  // ids 3 .. vocab - 1
  int64_t full = 1;
  for (int64_t t = 0; t < max_len; ++t) full *= words;
  std::vector<Tokens> tgt_in(static_cast<size_t>(full));
  for (int64_t r = 0; r < full; ++r) {
    tgt_in[r].assign(static_cast<size_t>(max_len) + 1, kBosId);
    for (int64_t t = max_len, rest = r; t >= 1; --t, rest /= words)
      tgt_in[r][t] = static_cast<int32_t>(3 + rest % words);
  }
  const std::vector<double> logp = teacher_forced_log_probs(models, src, tgt_in, rule);
  const auto at = [&](int64_t row, int64_t position, int32_t token) {
    return logp[(row * (max_len + 1) + position) * vocab + token];
  };
  std::vector<Output> out;
  for (int64_t length = 0, stride = full; length <= max_len; ++length, stride /= words) {
    for (int64_t row = 0; row < full; row += stride) {
      Output o{Tokens(tgt_in[row].begin() + 1, tgt_in[row].begin() + 1 + length), 0.0};
      for (int64_t t = 0; t < length; ++t) o.log_prob += at(row, t, o.tokens[t]);
      o.log_prob += at(row, length, kEosId);
      out.push_back(std::move(o));
    }
  }
  return out;
}

std::vector<Ranked> rank(const std::vector<Output>& outputs, double alpha) {
  std::vector<Ranked> r;
  for (const Output& o : outputs)
    r.push_back({o.tokens, o.log_prob,
                 o.log_prob / gnmt_lp(static_cast<int64_t>(o.tokens.size()) + 1, alpha)});
  std::sort(r.begin(), r.end(), [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  return r;
}

Ranked narrowing_beam(std::span<Transformer* const> models, const Tokens& src, int k, double alpha,
                      int64_t max_len) {
  struct Live {
    Tokens tokens;
    double log_prob;
  };
  struct Candidate {
    double total;
    size_t parent;
    int32_t token;
  };
  const int64_t vocab = models[0]->config().vocab_size;
  std::vector<Live> live{{{}, 0.0}};
  std::vector<Ranked> done;
  for (int64_t step = 0; !live.empty() && static_cast<int>(done.size()) < k; ++step) {
    std::vector<Tokens> tgt_in;
    for (const Live& l : live) {
      tgt_in.push_back({kBosId});
      tgt_in.back().insert(tgt_in.back().end(), l.tokens.begin(), l.tokens.end());
    }
    const std::vector<double> logp = teacher_forced_log_probs(models, src, tgt_in);
    std::vector<Candidate> candidates;
    for (size_t j = 0; j < live.size(); ++j) {
      const double* row = logp.data() + (j * (step + 1) + step) * vocab;
      for (int32_t v = kEosId; v < vocab; ++v)
        if (v == kEosId || step < max_len) candidates.push_back({live[j].log_prob + row[v], j, v});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& x, const Candidate& y) { return x.total > y.total; });
    candidates.resize(std::min(candidates.size(), static_cast<size_t>(k) - done.size()));
    std::vector<Live> next;
    for (const Candidate& c : candidates) {
      const Tokens& tokens = live[c.parent].tokens;
      if (c.token == kEosId) {
        const int64_t length = static_cast<int64_t>(tokens.size()) + 1;
        done.push_back({tokens, c.total, c.total / gnmt_lp(length, alpha)});
      } else {
        next.push_back({tokens, c.total});
        next.back().tokens.push_back(c.token);
      }
    }
    live = std::move(next);
  }
  return *std::max_element(done.begin(), done.end(),
                           [](const Ranked& x, const Ranked& y) { return x.score < y.score; });
}

Tensor one_source(const Tokens& src) {
  Tensor t = Tensor::empty({1, static_cast<int64_t>(src.size())}, DType::I32);
  std::copy(src.begin(), src.end(), t.i32());
  return t;
}

std::string show(const Tokens& t) {
  return fmt::format("[{}]", fmt::join(t, " "));
}

}  // namespace transduce::testing
