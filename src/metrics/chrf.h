// chrF (Popović, 2015) computed exactly as sacreBLEU 2.x computes it, defaults included:
// character n-grams of orders 1..6 over the text with all whitespace removed, beta 2, statistics
// summed over the corpus, precision and recall averaged over the orders that have both hypothesis
// and reference n-grams ("effective order", no epsilon smoothing), and with several references the
// one giving each sentence its best score.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/references.h"

namespace transduce::metrics {

struct ChrfOptions {
  int char_order = 6;
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;     // keep whitespace inside character n-grams
  bool eps_smoothing = false;  // chrF++.py / NLTK / Moses style: average F over all orders
};

// Per order 1..char_order, three counts: hypothesis n-grams (0 when the reference has no n-gram of
// that order), reference n-grams, and matches (clipped by the reference counts). Summed over
// segments for a corpus.
struct ChrfStats {
  std::vector<int64_t> counts;  // 3 * char_order
  ChrfStats& operator+=(const ChrfStats& other);
};

struct ChrfScore {
  double score = 0;  // 0..100
  int beta = 2;

  std::string name() const;                 // "chrF2"
  std::string format(int width = 2) const;  // "chrF2 = 59.73"
};

class Chrf {
 public:
  explicit Chrf(ChrfOptions options = {});

  const ChrfOptions& options() const { return options_; }

  // Statistics of one hypothesis against the best of its references (raw text; at least one).
  ChrfStats segment_stats(std::string_view hypothesis,
                          const std::vector<std::string_view>& references) const;

  // The F-score (0..100) from (summed) statistics.
  double f_score(const ChrfStats& stats) const;
  ChrfScore compute(const ChrfStats& stats) const;

  ChrfScore sentence_score(std::string_view hypothesis,
                           const std::vector<std::string_view>& references) const;

  // Corpus chrF: statistics summed over all segments. Empty reference lines are left out (a
  // segment whose references are all empty fails).
  ChrfScore corpus_score(const std::vector<std::string>& hypotheses,
                         const ReferenceStreams& references) const;

  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:transduce-1.0".
  std::string signature(std::string_view nrefs) const;

 private:
  ChrfOptions options_;
};

}  // namespace transduce::metrics
