// BLEU (Papineni et al., 2002) computed exactly as sacreBLEU 2.x computes it, defaults included:
// 13a tokenization, n-grams up to 4, exponential ("exp") smoothing, the closest reference length
// (ties to the shorter) for the brevity penalty, and n-gram counts clipped by the largest count in
// any one reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/references.h"
#include "metrics/tokenize.h"

namespace transduce::metrics {

enum class BleuSmoothing {
  kNone,   // no smoothing: any zero precision gives BLEU 0
  kFloor,  // a zero count counts as `smooth_value` (default 0.1) matches
  kAddK,   // `smooth_value` (default 1) added to matches and totals of orders 2 and up
  kExp,    // mteval-v13a's: the k-th zero precision is 1 / (2^k * total)
};

struct BleuOptions {
  TokenizerKind tokenizer = TokenizerKind::k13a;
  bool lowercase = false;
  int max_order = 4;
  BleuSmoothing smoothing = BleuSmoothing::kExp;
  std::optional<double> smooth_value;  // kFloor and kAddK only; unset means their default
  // Average only over the orders that have any hypothesis n-gram (for sentence-level BLEU).
  bool effective_order = false;
};

// Sufficient statistics of a segment; those of a corpus are the sum over its segments.
struct BleuStats {
  int64_t hyp_len = 0;           // hypothesis tokens
  int64_t ref_len = 0;           // the closest reference length
  std::vector<int64_t> correct;  // clipped matching n-grams, orders 1..max_order
  std::vector<int64_t> total;    // hypothesis n-grams, orders 1..max_order
  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0;                // 0..100
  std::vector<double> precisions;  // 0..100 per order, after smoothing
  std::vector<int64_t> counts;     // = BleuStats::correct
  std::vector<int64_t> totals;     // = BleuStats::total
  double bp = 0;                   // brevity penalty
  double ratio = 0;                // hyp_len / ref_len (0 if ref_len is 0)
  int64_t hyp_len = 0;
  int64_t ref_len = 0;

  // sacreBLEU's line: "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17
  // ref_len = 18)", the score with `width` decimals.
  std::string format(int width = 2) const;
};

class Bleu {
 public:
  explicit Bleu(BleuOptions options = {});

  const BleuOptions& options() const { return options_; }

  // Lowercases (if asked), strips trailing whitespace and tokenizes, as sacreBLEU does with every
  // hypothesis and reference before counting.
  std::string preprocess(std::string_view segment) const;

  // Statistics of one hypothesis against its references (raw text; at least one reference).
  BleuStats segment_stats(std::string_view hypothesis,
                          const std::vector<std::string_view>& references) const;

  // The score from (summed) statistics.
  BleuScore compute(const BleuStats& stats) const;

  BleuScore sentence_score(std::string_view hypothesis,
                           const std::vector<std::string_view>& references) const;

  // Corpus BLEU: statistics summed over all segments. Empty reference lines are left out (a
  // segment whose references are all empty fails); empty hypotheses count as such.
  BleuScore corpus_score(const std::vector<std::string>& hypotheses,
                         const ReferenceStreams& references) const;

  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:transduce-1.0", sacreBLEU's fields in
  // sacreBLEU's order.
  std::string signature(std::string_view nrefs) const;

 private:
  BleuOptions options_;
};

// sacreBLEU's compute_bleu on its own: the score from statistics with any options.
BleuScore compute_bleu(const BleuStats& stats, const BleuOptions& options);

}  // namespace transduce::metrics
