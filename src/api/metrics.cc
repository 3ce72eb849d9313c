// The public BLEU and chrF over the library's sacreBLEU-equal scorers, as `transduce score`
// reads its files (trailing whitespace stripped).
#include <string_view>

#include "api/errors.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/references.h"

namespace transduce::api {

CorpusScore bleu(const std::vector<std::string>& hypotheses,
                 const std::vector<std::vector<std::string>>& references) {
  return translating_errors([&] {
    const metrics::ScoredText s = metrics::scored_text(hypotheses, references);
    const metrics::BleuScore score = metrics::Bleu().corpus_score(s.hyps, s.refs);
    return CorpusScore{score.score, score.format()};
  });
}

CorpusScore chrf(const std::vector<std::string>& hypotheses,
                 const std::vector<std::vector<std::string>>& references) {
  return translating_errors([&] {
    const metrics::ScoredText s = metrics::scored_text(hypotheses, references);
    const metrics::ChrfScore score = metrics::Chrf().corpus_score(s.hyps, s.refs);
    return CorpusScore{score.score, score.format()};
  });
}

}  // namespace transduce::api
