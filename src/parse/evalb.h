// Labelled-bracket scoring of parse trees against gold trees, as EVALB (Sekine and Collins, 1997)
// computes it with the parameter file COLLINS.prm that parsing papers use: the root (TOP) and
// punctuation not counted, function tags stripped, ADVP and PRT equivalent, each labelled span of
// the test tree matched at most once, and sentences whose words differ from the gold not scored.
// docs/parsing.md lists every rule and the differences from EVALB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parse/tree.h"

namespace transduce::parse {

// EVALB's status of a sentence: scored (0), an error (1: its words differ from the gold's), or
// skipped (2: the test tree has no word left to score).
enum class EvalbStatus { kScored = 0, kError = 1, kSkipped = 2 };

// One sentence's counts, as in EVALB's per-sentence lines. Errors and skips count nothing.
struct EvalbSentence {
  int64_t id = 0;      // 1-based position in the files
  int64_t length = 0;  // gold words, empty elements left out (EVALB's "Len.", for the cut-off)
  EvalbStatus status = EvalbStatus::kScored;
  std::string problem;  // what differs, for errors and skips
  // An error because one tree tags a word as punctuation (deleted) and the other does not.
  bool punctuation_tags_differ = false;
  int64_t matched = 0;        // labelled brackets of the test tree found in the gold tree
  int64_t gold_brackets = 0;  // brackets counted in the gold tree
  int64_t test_brackets = 0;  // brackets counted in the test tree
  int64_t crossing = 0;       // test brackets that cross some gold bracket
  int64_t words = 0;          // words scored (punctuation and empty elements left out)
  int64_t correct_tags = 0;   // of those, words with the gold's part-of-speech tag

  // Percentages, 0 where the denominator is 0 (as EVALB prints them).
  double recall() const;
  double precision() const;
  double tagging_accuracy() const;
};

// Sums over sentences; scores are summed counts, not averages of sentences' scores.
struct EvalbTotals {
  int64_t sentences = 0;  // all, errors and skips included
  int64_t errors = 0;
  int64_t skipped = 0;
  int64_t matched = 0;
  int64_t gold_brackets = 0;
  int64_t test_brackets = 0;
  int64_t complete_matches = 0;  // scored sentences with matched == gold == test brackets
  int64_t crossing = 0;
  int64_t no_crossing = 0;            // scored sentences with no crossing bracket
  int64_t two_or_fewer_crossing = 0;  // ... with at most 2
  int64_t words = 0;
  int64_t correct_tags = 0;

  void add(const EvalbSentence& s);
  int64_t scored() const { return sentences - errors - skipped; }
  // Percentages (average crossing: brackets a sentence), 0 where the denominator is 0.
  double recall() const;
  double precision() const;
  double f1() const;  // 2PR/(P+R) of the two percentages; 0 when both are 0 (EVALB prints nan)
  double complete_match() const;
  double average_crossing() const;
  double no_crossing_rate() const;
  double two_or_fewer_crossing_rate() const;
  double tagging_accuracy() const;
};

struct EvalbOptions {
  // The cut-off of EVALB's second summary: sentences of at most this many gold words (empty
  // elements not counted, punctuation counted).
  int64_t cutoff_length = 40;
  // Not EVALB: give each test word the gold tree's tag first, for parsers that predict no tags
  // (`transduce parse` of the xx and words schemes writes XX, which EVALB keeps as a word where
  // the gold has punctuation, and calls the sentence a length mismatch).
  bool gold_tags = false;
};

struct EvalbResult {
  std::vector<EvalbSentence> sentences;
  EvalbTotals all;
  EvalbTotals up_to_cutoff;  // sentences with length <= options.cutoff_length
  int64_t cutoff_length = 40;
};

// Scores one test tree against its gold tree (trees as read_trees returns them, raw labels).
EvalbSentence evalb_sentence(const Tree& gold, const Tree& test, const EvalbOptions& options = {});

// Scores test[i] against gold[i] for every i; the two need the same number of trees.
EvalbResult evalb(const std::vector<Tree>& gold, const std::vector<Tree>& test,
                  const EvalbOptions& options = {});

// Whether COLLINS.prm deletes a preterminal with this tag (DELETE_LABEL: punctuation, -NONE-,
// TOP), word and all.
bool evalb_deletes_tag(std::string_view tag);

// EVALB's label of a constituent: cut at its first '-' or '=' (`NP-SBJ-1` -> `NP`, `PP=2` -> `PP`,
// and a label starting with '-' becomes ""). Unlike strip_function_tags, which keeps `-NONE-`.
std::string evalb_label(std::string_view label);

// One line of the per-sentence table, in EVALB's columns and widths: id, length, status, recall,
// precision, matched, gold and test brackets, crossing, words, correct tags, tagging accuracy.
std::string format_evalb_sentence(const EvalbSentence& s);
// The table's header line.
std::string evalb_sentence_header();

}  // namespace transduce::parse
