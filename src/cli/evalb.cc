// `transduce evalb`: labelled-bracket recall, precision and F1 of parse trees (standard input or
// --hyp) against gold trees, as EVALB computes them with COLLINS.prm (docs/parsing.md).
#include <fmt/format.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "parse/evalb.h"
#include "parse/tree.h"

namespace transduce::cli {

namespace {

struct EvalbFlags {
  std::string gold;
  std::string pred;  // empty: standard input
  bool per_sentence = false;
  bool json = false;
  int64_t cutoff = 0;  // 0: no summary of the short sentences
  bool gold_tags = false;
  // EVALB's -e (COLLINS.prm's MAX_ERROR): it stops at the error after the first max_errors + 1,
  // because it compares the count before adding the new one. -1: never stop.
  int64_t max_errors = 10;
};

const char* status_name(parse::EvalbStatus s) {
  switch (s) {
    case parse::EvalbStatus::kScored:
      return "scored";
    case parse::EvalbStatus::kError:
      return "error";
    case parse::EvalbStatus::kSkipped:
      return "skipped";
  }
  return "?";
}

// Each line "NAME = VALUE"; `prefix` starts every line (the cut-off summary's "len<=40 ").
void print_totals(const parse::EvalbTotals& t, const std::string& prefix) {
  fmt::print("{}sentences = {}\n", prefix, t.sentences);
  fmt::print("{}sentences scored = {}\n", prefix, t.scored());
  fmt::print("{}sentences with errors = {}\n", prefix, t.errors);
  fmt::print("{}sentences skipped = {}\n", prefix, t.skipped);
  fmt::print("{}matched brackets = {}\n", prefix, t.matched);
  fmt::print("{}gold brackets = {}\n", prefix, t.gold_brackets);
  fmt::print("{}test brackets = {}\n", prefix, t.test_brackets);
  fmt::print("{}recall = {:.2f}\n", prefix, t.recall());
  fmt::print("{}precision = {:.2f}\n", prefix, t.precision());
  fmt::print("{}F1 = {:.2f}\n", prefix, t.f1());
  fmt::print("{}complete match = {:.2f}\n", prefix, t.complete_match());
  fmt::print("{}average crossing = {:.2f}\n", prefix, t.average_crossing());
  fmt::print("{}no crossing = {:.2f}\n", prefix, t.no_crossing_rate());
  fmt::print("{}2 or less crossing = {:.2f}\n", prefix, t.two_or_fewer_crossing_rate());
  fmt::print("{}tagging accuracy = {:.2f}\n", prefix, t.tagging_accuracy());
}

nlohmann::json totals_json(const parse::EvalbTotals& t) {
  return {{"sentences", t.sentences},
          {"scored", t.scored()},
          {"errors", t.errors},
          {"skipped", t.skipped},
          {"matched_brackets", t.matched},
          {"gold_brackets", t.gold_brackets},
          {"test_brackets", t.test_brackets},
          {"recall", t.recall()},
          {"precision", t.precision()},
          {"f1", t.f1()},
          {"complete_match", t.complete_match()},
          {"average_crossing", t.average_crossing()},
          {"no_crossing", t.no_crossing_rate()},
          {"two_or_less_crossing", t.two_or_fewer_crossing_rate()},
          {"words", t.words},
          {"correct_tags", t.correct_tags},
          {"tagging_accuracy", t.tagging_accuracy()}};
}

nlohmann::json sentence_json(const parse::EvalbSentence& s) {
  nlohmann::json j = {{"id", s.id},
                      {"length", s.length},
                      {"status", status_name(s.status)},
                      {"recall", s.recall()},
                      {"precision", s.precision()},
                      {"matched_brackets", s.matched},
                      {"gold_brackets", s.gold_brackets},
                      {"test_brackets", s.test_brackets},
                      {"crossing_brackets", s.crossing},
                      {"words", s.words},
                      {"correct_tags", s.correct_tags},
                      {"tagging_accuracy", s.tagging_accuracy()}};
  if (!s.problem.empty()) j["problem"] = s.problem;
  return j;
}

void run_evalb(const EvalbFlags& flags) {
  const std::vector<parse::Tree> gold = parse::read_tree_file(flags.gold);
  const std::string pred_name = flags.pred.empty() ? "stdin" : flags.pred;
  const std::vector<parse::Tree> pred =
      parse::read_tree_file(flags.pred.empty() ? "/dev/stdin" : flags.pred, pred_name);
  if (gold.size() != pred.size())
    fail("{} has {} trees but {} has {}: the predictions must be the gold sentences, in order",
         flags.gold, gold.size(), pred_name, pred.size());

  parse::EvalbOptions options;
  options.gold_tags = flags.gold_tags;
  if (flags.cutoff > 0) options.cutoff_length = flags.cutoff;
  const parse::EvalbResult result = parse::evalb(gold, pred, options);

  // Sentences left out of the totals, as EVALB leaves them out: said, never silently dropped.
  int64_t errors = 0, tag_errors = 0;
  const std::string tags_hint =
      flags.gold_tags ? ""
                      : "; --gold-tags gives the predicted words the gold tags first (for "
                        "parsers that predict no tags)";
  for (const parse::EvalbSentence& s : result.sentences) {
    if (s.status == parse::EvalbStatus::kScored) continue;
    const size_t i = static_cast<size_t>(s.id - 1);
    fmt::print(stderr, "transduce: warning: sentence {} ({}:{}, {}:{}) {}: {}\n", s.id, flags.gold,
               gold[i].line, pred_name, pred[i].line,
               s.status == parse::EvalbStatus::kError ? "not scored" : "skipped", s.problem);
    if (s.punctuation_tags_differ) ++tag_errors;
    if (s.status != parse::EvalbStatus::kError) continue;
    if (flags.max_errors >= 0 && ++errors > flags.max_errors + 1)
      fail(
          "{}:{}: stopped at sentence {} with {} sentences not scored for errors, as EVALB "
          "stops past MAX_ERROR {} (--max-errors; -1 scores every sentence){}",
          pred_name, pred[i].line, s.id, errors, flags.max_errors, tags_hint);
  }
  if (tag_errors > 0)
    fmt::print(stderr,
               "transduce: warning: {} sentence{} not scored because the predicted tags do not "
               "mark punctuation as the gold tags do{}\n",
               tag_errors, tag_errors == 1 ? " was" : "s were", tags_hint);

  if (flags.json) {
    nlohmann::json out = totals_json(result.all);
    if (flags.cutoff > 0) {
      out["cutoff"] = totals_json(result.up_to_cutoff);
      out["cutoff"]["length"] = flags.cutoff;
    }
    if (flags.per_sentence) {
      out["per_sentence"] = nlohmann::json::array();
      for (const parse::EvalbSentence& s : result.sentences)
        out["per_sentence"].push_back(sentence_json(s));
    }
    fmt::print("{}\n", out.dump(1));
    return;
  }
  if (flags.per_sentence) {
    const std::string rule(76, '=');
    fmt::print("{}\n{}\n", parse::evalb_sentence_header(), rule);
    for (const parse::EvalbSentence& s : result.sentences)
      fmt::print("{}\n", parse::format_evalb_sentence(s));
    fmt::print("{}\n", rule);
  }
  print_totals(result.all, "");
  if (flags.cutoff > 0) print_totals(result.up_to_cutoff, fmt::format("len<={} ", flags.cutoff));
}

}  // namespace

void register_evalb(CLI::App& app) {
  auto flags = std::make_shared<EvalbFlags>();
  CLI::App* cmd = app.add_subcommand(
      "evalb",
      "labelled-bracket recall, precision and F1 of parse trees (standard input) against gold "
      "trees, as EVALB computes them with COLLINS.prm");
  cmd->add_option("--gold", flags->gold, "gold trees (Penn Treebank brackets)")->required();
  cmd->add_option("--hyp", flags->pred, "predicted trees (default: standard input)");
  cmd->add_flag("--per-sentence", flags->per_sentence,
                "also print EVALB's per-sentence table (in --json: a per_sentence array)");
  cmd->add_flag("--json", flags->json, "print one JSON object instead of text");
  cmd->add_option("--cutoff", flags->cutoff,
                  "also summarise the sentences of at most N words (EVALB's len<=40 block)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--gold-tags", flags->gold_tags,
                "give the predicted words the gold part-of-speech tags first (not EVALB; for "
                "parsers that predict no tags: punctuation is then deleted as in the gold)");
  cmd->add_option("--max-errors", flags->max_errors,
                  "stop with exit status 1 at the sentence not scored after the first N+1, as "
                  "EVALB -e N does (COLLINS.prm: 10); -1 scores every sentence")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));
  cmd->callback([flags] { run_evalb(*flags); });
}

}  // namespace transduce::cli
