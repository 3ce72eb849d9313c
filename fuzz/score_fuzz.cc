// `transduce score` (src/cli/score.cc) on any hypothesis and reference files: read as its
// read_segments reads them (read_lines, then Python's rstrip), the same checks of line counts and
// empty references, then corpus BLEU (13a, intl or none tokenisation, lowercased or not) and chrF
// (src/metrics/). The input: one byte of options, then the hypothesis file and one or more
// reference files separated by NUL bytes. Bad input must be a transduce::Error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_support.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/references.h"
#include "metrics/tokenize.h"
#include "text/corpus.h"

using namespace transduce;

namespace {

// score.cc's read_segments: the lines, trailing whitespace stripped.
std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (std::string& line : lines) line.resize(metrics::rstrip_whitespace(line).size());
  return lines;
}

bool in_range(double x) {
  return std::isfinite(x) && x >= 0 && x <= 100 + 1e-9;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile files[4];
  if (size == 0) return 0;
  const uint8_t options = data[0];
  const std::vector<std::string_view> parts =
      fuzz::split(fuzz::as_text(data + 1, size - 1), '\0', 4);
  if (parts.size() < 2) return 0;  // a hypothesis and at least one reference

  metrics::BleuOptions bleu_options;
  bleu_options.tokenizer = options % 3 == 0   ? metrics::TokenizerKind::k13a
                           : options % 3 == 1 ? metrics::TokenizerKind::kIntl
                                              : metrics::TokenizerKind::kNone;
  bleu_options.lowercase = options & 4;
  metrics::ChrfOptions chrf_options;
  chrf_options.lowercase = bleu_options.lowercase;
  chrf_options.whitespace = options & 8;
  chrf_options.eps_smoothing = options & 16;

  std::vector<std::string> hyps;
  metrics::ReferenceStreams refs;
  try {
    for (size_t i = 0; i < parts.size(); ++i) {
      files[i].set(parts[i]);
      if (i == 0)
        hyps = read_segments(files[i].path());
      else
        refs.push_back(read_segments(files[i].path()));
    }
    metrics::check_streams(refs, hyps.size());
    if (hyps.empty()) return 0;  // score refuses: no lines
    for (size_t i = 0; i < hyps.size(); ++i) (void)metrics::segment_references(refs, i);
    const std::string nrefs = metrics::nrefs_label(refs, hyps.size());

    const metrics::Bleu bleu(bleu_options);
    const metrics::BleuScore b = bleu.corpus_score(hyps, refs);
    (void)b.format(2);
    (void)bleu.signature(nrefs);
    const metrics::Chrf chrf(chrf_options);
    const metrics::ChrfScore c = chrf.corpus_score(hyps, refs);
    (void)c.format(2);
    (void)chrf.signature(nrefs);
    if (!in_range(b.score) || !in_range(c.score))
      fuzz::violated("a score outside [0, 100]: BLEU " + std::to_string(b.score) + ", chrF " +
                     std::to_string(c.score));
  } catch (const Error&) {
  }
  return 0;
}
