// Exact references for the search: log-probabilities from full (non-incremental) teacher-forced
// passes, in double, and every output up to a length ranked by GNMT's length penalty. For one
// model or an ensemble, whose step distribution is the mean of its members' probabilities.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "decode/search.h"
#include "model/transformer.h"

namespace transduce::testing {

using Tokens = std::vector<int32_t>;

// GNMT's length penalty, written out here rather than taken from the search.
double gnmt_lp(int64_t length_with_eos, double alpha);
// |got - want| <= rel * max(1, |want|).
bool close(double got, double want, double rel);

// Rows of BOS-led target inputs of one length against one source (which ends in EOS), through
// the whole decoder at once: log p(. | row's first i + 1 tokens) at [row][i][v]. Several models:
// combined as `rule` says (the log of the mean of their probabilities, or the mean of their
// log-probabilities).
std::vector<double> teacher_forced_log_probs(std::span<Transformer* const> models,
                                             const Tokens& src, const std::vector<Tokens>& tgt_in,
                                             EnsembleMean rule = EnsembleMean::kProbabilities);
// log p(tokens, EOS | src) from one teacher-forced pass over BOS + tokens.
double full_pass_log_prob(std::span<Transformer* const> models, const Tokens& src,
                          const Tokens& tokens, EnsembleMean rule = EnsembleMean::kProbabilities);

struct Output {
  Tokens tokens;
  double log_prob;
};
// Every output the search may produce for `src` with at most `max_len` tokens: each token any id
// but PAD, BOS and EOS, then EOS.
std::vector<Output> every_output(std::span<Transformer* const> models, const Tokens& src,
                                 int64_t max_len, EnsembleMean rule = EnsembleMean::kProbabilities);

struct Ranked {
  Tokens tokens;
  double log_prob, score;
};
// Best normalised score first.
std::vector<Ranked> rank(const std::vector<Output>& outputs, double alpha);

// Beam search as it was before the beam stayed k wide (Nematus's rule), by full passes: each step
// the best (k - finished) continuations of the live hypotheses are taken, and those that end take
// their place for good; the search ends when k have ended. No minimum length; at `max_len` tokens
// only EOS. The best finished hypothesis.
Ranked narrowing_beam(std::span<Transformer* const> models, const Tokens& src, int k, double alpha,
                      int64_t max_len);

// One source as a [1, L] batch.
Tensor one_source(const Tokens& src);
std::string show(const Tokens& t);

}  // namespace transduce::testing
