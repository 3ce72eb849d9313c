#include "metrics/references.h"

#include <set>

#include "core/error.h"
#include "metrics/tokenize.h"

namespace transduce::metrics {

std::vector<std::string_view> segment_references(const ReferenceStreams& refs, size_t i) {
  std::vector<std::string_view> out;
  out.reserve(refs.size());
  for (const auto& stream : refs) {
    TD_CHECK(i < stream.size(), "segment {} past a reference stream of {} lines", i, stream.size());
    if (!stream[i].empty()) out.push_back(stream[i]);
  }
  if (out.empty()) fail("segment {}: every reference is empty (at least one is needed)", i + 1);
  return out;
}

std::string nrefs_label(const ReferenceStreams& refs, size_t segments) {
  std::set<size_t> counts;
  for (size_t i = 0; i < segments; ++i) {
    size_t n = 0;
    for (const auto& stream : refs) n += (i < stream.size() && !stream[i].empty()) ? 1 : 0;
    counts.insert(n);
  }
  if (counts.empty()) return std::to_string(refs.size());
  if (counts.size() > 1) return "var";
  return std::to_string(*counts.begin());
}

void check_streams(const ReferenceStreams& refs, size_t segments) {
  if (refs.empty()) fail("no reference stream given");
  for (size_t r = 0; r < refs.size(); ++r)
    if (refs[r].size() != segments)
      fail("{} hypotheses but reference stream {} has {} lines", segments, r + 1, refs[r].size());
}

ScoredText scored_text(const std::vector<std::string>& hyps, ReferenceStreams refs) {
  ScoredText s;
  for (const std::string& h : hyps) s.hyps.emplace_back(rstrip_whitespace(h));
  if (s.hyps.empty()) fail("no hypotheses to score");
  s.refs = std::move(refs);
  for (auto& stream : s.refs)
    for (std::string& line : stream) line.resize(rstrip_whitespace(line).size());
  check_streams(s.refs, s.hyps.size());
  return s;
}

}  // namespace transduce::metrics
