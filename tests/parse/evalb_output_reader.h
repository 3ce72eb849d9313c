// Reads the text the real EVALB prints (`evalb -p COLLINS.prm GOLD TEST`): the per-sentence table,
// its total row and the two summary blocks ("-- All --" and "-- len<=40 --"), every value kept as
// the text EVALB printed so that tests compare what EVALB shows. A line it does not expect throws
// std::runtime_error naming the line: a changed format must fail, never be skipped.
#pragma once

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace transduce::testing {

// The per-sentence table's columns, in EVALB's order and with its header's names.
inline const std::vector<std::string>& evalb_sentence_columns() {
  static const std::vector<std::string> columns = {
      "ID",   "Len.", "Stat.",         "Recall", "Prec.",        "Matched Bracket",
      "gold", "test", "Cross Bracket", "Words",  "Correct Tags", "Tag Accuracy"};
  return columns;
}

// The total row's columns (EVALB's sums under the table: no ID, length or status).
inline const std::vector<std::string>& evalb_total_columns() {
  static const std::vector<std::string> columns = {"Recall", "Prec.",        "Matched Bracket",
                                                   "gold",   "test",         "Cross Bracket",
                                                   "Words",  "Correct Tags", "Tag Accuracy"};
  return columns;
}

// The lines of a summary block, in EVALB's order and spelling (left of the '=').
inline const std::vector<std::string>& evalb_summary_lines() {
  static const std::vector<std::string> names = {
      "Number of sentence",       "Number of Error sentence",
      "Number of Skip  sentence", "Number of Valid sentence",
      "Bracketing Recall",        "Bracketing Precision",
      "Bracketing FMeasure",      "Complete match",
      "Average crossing",         "No crossing",
      "2 or less crossing",       "Tagging accuracy"};
  return names;
}

struct EvalbOutput {
  std::vector<std::vector<std::string>> sentences;  // one per row, evalb_sentence_columns()
  std::vector<std::string> total;                   // evalb_total_columns()
  std::map<std::string, std::string> all;           // evalb_summary_lines() -> value
  std::map<std::string, std::string> short_ones;    // the same for "-- len<=40 --"
};

namespace evalb_output_detail {

inline std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

[[noreturn]] inline void unexpected(size_t number, const std::string& line,
                                    const std::string& why) {
  throw std::runtime_error("EVALB output line " + std::to_string(number) + " (\"" + line +
                           "\"): " + why);
}

inline std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

}  // namespace evalb_output_detail

inline EvalbOutput read_evalb_output(const std::string& text) {
  using namespace evalb_output_detail;
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  EvalbOutput out;
  size_t i = 0;
  // The two header lines, then a rule of '='.
  while (i < lines.size() && !lines[i].starts_with("=====")) ++i;
  if (i != 2) throw std::runtime_error("EVALB output: no rule of '=' after the two header lines");
  for (++i; i < lines.size() && !lines[i].starts_with("====="); ++i) {
    const std::vector<std::string> f = fields(lines[i]);
    if (f.size() != evalb_sentence_columns().size())
      unexpected(i + 1, lines[i], "not a per-sentence row of 12 columns");
    out.sentences.push_back(f);
  }
  if (++i >= lines.size()) throw std::runtime_error("EVALB output ends inside the table");
  out.total = fields(lines[i]);
  if (out.total.size() != evalb_total_columns().size())
    unexpected(i + 1, lines[i], "not the total row of 9 columns");

  std::map<std::string, std::string>* block = nullptr;
  for (++i; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line == "=== Summary ===") continue;
    if (line == "-- All --") {
      block = &out.all;
    } else if (line.starts_with("-- len<=")) {
      block = &out.short_ones;
    } else {
      const size_t eq = line.find('=');
      if (block == nullptr || eq == std::string::npos)
        unexpected(i + 1, line, "not a summary line NAME = VALUE");
      (*block)[trimmed(line.substr(0, eq))] = trimmed(line.substr(eq + 1));
    }
  }
  for (const auto* b : {&out.all, &out.short_ones}) {
    for (const std::string& name : evalb_summary_lines())
      if (!b->contains(name))
        throw std::runtime_error("EVALB output: a summary block has no line '" + name + "'");
    if (b->size() != evalb_summary_lines().size())
      throw std::runtime_error("EVALB output: a summary block has lines of unknown names");
  }
  return out;
}

}  // namespace transduce::testing
