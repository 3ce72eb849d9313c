// `transduce score`: corpus BLEU and chrF of a hypothesis file against one or more references,
// equal to sacreBLEU 2.x's with its defaults (and the same options) on the same files.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/references.h"
#include "metrics/tokenize.h"
#include "text/corpus.h"

namespace transduce::cli {

namespace {

struct ScoreFlags {
  std::vector<std::string> refs;
  std::string hyp;  // empty: standard input
  std::string tokenize = "13a";
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool lowercase = false;
  bool json = false;
  std::vector<std::string> metrics{"bleu", "chrf"};
  int width = 2;
};

// The lines of `path` as sacreBLEU's command line reads them: trailing whitespace stripped.
// `shown` names the input in messages.
std::vector<std::string> read_segments(const std::string& path, const std::string& shown) {
  std::vector<std::string> lines;
  try {
    lines = read_lines(path);
  } catch (const Error& e) {
    std::string message = e.what();
    if (shown != path && message.starts_with(path)) message = shown + message.substr(path.size());
    throw Error(message);
  }
  for (std::string& line : lines) line.resize(metrics::rstrip_whitespace(line).size());
  return lines;
}

metrics::BleuSmoothing smoothing_from_name(const std::string& name) {
  if (name == "none") return metrics::BleuSmoothing::kNone;
  if (name == "floor") return metrics::BleuSmoothing::kFloor;
  if (name == "add-k") return metrics::BleuSmoothing::kAddK;
  return metrics::BleuSmoothing::kExp;  // the only other choice CLI11 lets through
}

void run_score(const ScoreFlags& flags) {
  const bool want_bleu =
      std::find(flags.metrics.begin(), flags.metrics.end(), "bleu") != flags.metrics.end();
  const bool want_chrf =
      std::find(flags.metrics.begin(), flags.metrics.end(), "chrf") != flags.metrics.end();

  const std::string hyp_name = flags.hyp.empty() ? "stdin" : flags.hyp;
  const std::vector<std::string> hyps =
      read_segments(flags.hyp.empty() ? "/dev/stdin" : flags.hyp, hyp_name);
  metrics::ReferenceStreams refs;
  for (const std::string& path : flags.refs) {
    refs.push_back(read_segments(path, path));
    if (refs.back().size() != hyps.size())
      fail("line counts differ: hypothesis {} has {} lines, reference {} has {} lines", hyp_name,
           hyps.size(), path, refs.back().size());
  }
  if (hyps.empty()) fail("{}: no lines to score", hyp_name);
  for (size_t i = 0; i < hyps.size(); ++i) {
    bool any = false;
    for (const auto& stream : refs) any = any || !stream[i].empty();
    if (!any)
      fail("{}:{}: empty reference line (a segment needs at least one non-empty reference{})",
           flags.refs.front(), i + 1, refs.size() > 1 ? "; all are empty here" : "");
  }
  const std::string nrefs = metrics::nrefs_label(refs, hyps.size());

  metrics::BleuOptions bleu_options;
  bleu_options.tokenizer = metrics::tokenizer_from_name(flags.tokenize);
  bleu_options.lowercase = flags.lowercase;
  bleu_options.smoothing = smoothing_from_name(flags.smooth_method);
  if (flags.smooth_value) {
    if (bleu_options.smoothing != metrics::BleuSmoothing::kFloor &&
        bleu_options.smoothing != metrics::BleuSmoothing::kAddK)
      fail("--smooth-value goes with --smooth-method floor or add-k, not {}", flags.smooth_method);
    bleu_options.smooth_value = flags.smooth_value;
  }
  const metrics::Bleu bleu(bleu_options);
  metrics::ChrfOptions chrf_options;
  chrf_options.lowercase = flags.lowercase;
  const metrics::Chrf chrf(chrf_options);

  if (want_bleu && bleu_options.tokenizer != metrics::TokenizerKind::kNone) {
    // sacreBLEU's warning for output that looks tokenized; on stderr, so that --json's standard
    // output stays one JSON object. With --tokenize none the text is tokenized on purpose.
    size_t tokenized = 0;
    for (const std::string& h : hyps) tokenized += h.ends_with(" .") ? 1 : 0;
    if (tokenized >= 100)
      fmt::print(stderr,
                 "warning: {} of {} hypothesis lines end in a tokenized period (' .'): BLEU "
                 "expects detokenized text\n",
                 tokenized, hyps.size());
  }

  nlohmann::json out = nlohmann::json::object();
  std::vector<std::string> lines, signatures;
  if (want_bleu) {
    const metrics::BleuScore s = bleu.corpus_score(hyps, refs);
    const std::string sig = bleu.signature(nrefs);
    lines.push_back(s.format(flags.width));
    signatures.push_back(fmt::format("BLEU signature: {}", sig));
    out["score"] = s.score;
    out["precisions"] = s.precisions;
    out["counts"] = s.counts;
    out["totals"] = s.totals;
    out["bp"] = s.bp;
    out["ratio"] = s.ratio;
    out["hyp_len"] = s.hyp_len;
    out["ref_len"] = s.ref_len;
    out["bleu"] = s.format(flags.width);
    out["bleu_signature"] = sig;
  }
  if (want_chrf) {
    const metrics::ChrfScore s = chrf.corpus_score(hyps, refs);
    const std::string sig = chrf.signature(nrefs);
    lines.push_back(s.format(flags.width));
    signatures.push_back(fmt::format("{} signature: {}", s.name(), sig));
    out["chrf"] = s.score;
    out["chrf_name"] = s.name();
    out["chrf_signature"] = sig;
  }

  if (flags.json) {
    fmt::print("{}\n", out.dump(1));
    return;
  }
  for (const std::string& line : lines) fmt::print("{}\n", line);
  for (const std::string& line : signatures) fmt::print("{}\n", line);
}

}  // namespace

void register_score(CLI::App& app) {
  auto flags = std::make_shared<ScoreFlags>();
  CLI::App* cmd = app.add_subcommand(
      "score",
      "corpus BLEU and chrF of a hypothesis (standard input) against references, as "
      "sacreBLEU 2.x computes them");
  cmd->add_option("--ref", flags->refs, "reference file, one segment a line (repeat for several)")
      ->required();
  cmd->add_option("--hyp", flags->hyp, "hypothesis file (default: standard input)");
  cmd->add_option("--tokenize", flags->tokenize, "BLEU tokenizer (default 13a)")
      ->check(CLI::IsMember({"13a", "intl", "none"}));
  cmd->add_option("--smooth-method", flags->smooth_method,
                  "BLEU smoothing (default exp; none is multi-bleu.perl's)")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}));
  cmd->add_option("--smooth-value", flags->smooth_value,
                  "the floor (default 0.1) or k (default 1) of those methods");
  cmd->add_flag("--lowercase", flags->lowercase,
                "lowercase hypothesis and references first (BLEU and chrF)");
  cmd->add_flag("--json", flags->json, "print one JSON object instead of text");
  cmd->add_option("--metrics", flags->metrics, "metrics to compute, comma-separated: bleu,chrf")
      ->delimiter(',')
      ->check(CLI::IsMember({"bleu", "chrf"}));
  cmd->add_option("--width", flags->width, "decimals of the scores (default 2)")
      ->check(CLI::Range(0, 10));
  cmd->callback([flags] { run_score(*flags); });
}

}  // namespace transduce::cli
