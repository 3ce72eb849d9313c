// What BLEU and chrF share: reference streams as sacreBLEU 2.x reads them, and the signature's
// common fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace transduce::metrics {

// Goes in every signature's `version` field in place of sacreBLEU's version; change it when a
// change here changes any score.
inline constexpr std::string_view kMetricsVersion = "transduce-1.0";

// One stream per reference file, each with one line per hypothesis line.
using ReferenceStreams = std::vector<std::vector<std::string>>;

// The references of segment `i`, as sacreBLEU uses them: empty lines left out (so a segment may
// have fewer references than there are streams). Fails if every reference of the segment is
// empty, as sacreBLEU does.
std::vector<std::string_view> segment_references(const ReferenceStreams& refs, size_t i);

// The signature's `nrefs`: the number of references per segment, or "var" when it varies
// (because of empty reference lines).
std::string nrefs_label(const ReferenceStreams& refs, size_t segments);

// Fails unless there is at least one stream and every stream has `segments` lines.
void check_streams(const ReferenceStreams& refs, size_t segments);

// Hypotheses and references given as text (not files) as `transduce score` reads files: trailing
// whitespace stripped, at least one hypothesis, and the streams checked against them.
struct ScoredText {
  std::vector<std::string> hyps;
  ReferenceStreams refs;
};
ScoredText scored_text(const std::vector<std::string>& hyps, ReferenceStreams refs);

}  // namespace transduce::metrics
