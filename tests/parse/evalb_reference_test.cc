// Our scorer against the real EVALB (release 20080701, `evalb -p COLLINS.prm GOLD PRED`) on the
// four cases of the shared data's evalb-reference/ (parser output, flattened constituents with
// traces and function tags left in, relabelled constituents with ADVP and PRT swapped): every
// column of every per-sentence row, the total row and both summary blocks, compared as EVALB
// prints them (two decimals). The data is required: a missing file fails the test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "parse/evalb.h"
#include "parse/evalb_output_reader.h"
#include "parse/tree.h"
#include "support/file_text.h"
#include "support/shared_data.h"

namespace transduce::parse {
namespace {

using testing::EvalbOutput;

std::string two_decimals(double x) {
  return fmt::format("{:.2f}", x);
}

// Our numbers for one sentence, as EVALB prints them (testing::evalb_sentence_columns()).
std::vector<std::string> row(const EvalbSentence& s) {
  return {fmt::format("{}", s.id),
          fmt::format("{}", s.length),
          fmt::format("{}", static_cast<int>(s.status)),
          two_decimals(s.recall()),
          two_decimals(s.precision()),
          fmt::format("{}", s.matched),
          fmt::format("{}", s.gold_brackets),
          fmt::format("{}", s.test_brackets),
          fmt::format("{}", s.crossing),
          fmt::format("{}", s.words),
          fmt::format("{}", s.correct_tags),
          two_decimals(s.tagging_accuracy())};
}

// The sums under the table (testing::evalb_total_columns()).
std::vector<std::string> total_row(const EvalbTotals& t) {
  return {two_decimals(t.recall()),           two_decimals(t.precision()),
          fmt::format("{}", t.matched),       fmt::format("{}", t.gold_brackets),
          fmt::format("{}", t.test_brackets), fmt::format("{}", t.crossing),
          fmt::format("{}", t.words),         fmt::format("{}", t.correct_tags),
          two_decimals(t.tagging_accuracy())};
}

// A summary block (testing::evalb_summary_lines(), in order).
std::vector<std::string> summary(const EvalbTotals& t) {
  return {fmt::format("{}", t.sentences),
          fmt::format("{}", t.errors),
          fmt::format("{}", t.skipped),
          fmt::format("{}", t.scored()),
          two_decimals(t.recall()),
          two_decimals(t.precision()),
          two_decimals(t.f1()),
          two_decimals(t.complete_match()),
          two_decimals(t.average_crossing()),
          two_decimals(t.no_crossing_rate()),
          two_decimals(t.two_or_fewer_crossing_rate()),
          two_decimals(t.tagging_accuracy())};
}

// One case's differences: a gtest failure each, the first kShown of them; then one failure with
// how many more there were, so that a total break prints a screenful, not thousands of lines.
class Differences {
 public:
  static constexpr int kShown = 15;
  explicit Differences(std::string name) : name_(std::move(name)) {}
  ~Differences() {
    if (count_ > kShown)
      ADD_FAILURE() << name_ << ": " << count_ - kShown << " more differences not shown (" << count_
                    << " in all)";
  }

  void expect(const std::string& where, const std::string& column, const std::string& evalb,
              const std::string& ours) {
    if (evalb == ours) return;
    if (++count_ <= kShown)
      ADD_FAILURE() << name_ << ", " << where << ", " << column << ": EVALB " << evalb
                    << ", transduce " << ours;
  }

  void expect_all(const std::string& where, const std::vector<std::string>& columns,
                  const std::vector<std::string>& evalb, const std::vector<std::string>& ours) {
    for (size_t c = 0; c < columns.size(); ++c) expect(where, columns[c], evalb[c], ours[c]);
  }

 private:
  std::string name_;
  int count_ = 0;
};

class EvalbReference : public ::testing::TestWithParam<std::string> {};

TEST_P(EvalbReference, EverySentenceAndBothSummariesEqualEvalbs) {
  const std::string name = GetParam();
  const std::string dir = "evalb-reference/" + name;
  const std::vector<Tree> gold = read_tree_file(testing::shared_data_file(dir + ".gold"));
  const std::vector<Tree> pred = read_tree_file(testing::shared_data_file(dir + ".pred"));
  const EvalbOutput evalb_out =
      testing::read_evalb_output(testing::read_file(testing::shared_data_file(dir + ".evalb.txt")));

  EvalbOptions options;  // EVALB's behaviour: each tree's own tags, the len<=40 block
  options.gold_tags = false;
  options.cutoff_length = 40;
  const EvalbResult ours = evalb(gold, pred, options);
  ASSERT_EQ(evalb_out.sentences.size(), ours.sentences.size())
      << name << ": EVALB's table has a row per tree";

  Differences differences(name);
  for (size_t i = 0; i < ours.sentences.size(); ++i)
    differences.expect_all(fmt::format("sentence {}", evalb_out.sentences[i][0]),
                           testing::evalb_sentence_columns(), evalb_out.sentences[i],
                           row(ours.sentences[i]));
  differences.expect_all("total row", testing::evalb_total_columns(), evalb_out.total,
                         total_row(ours.all));
  const std::vector<std::string>& lines = testing::evalb_summary_lines();
  const std::vector<std::string> all = summary(ours.all), short_ones = summary(ours.up_to_cutoff);
  for (size_t l = 0; l < lines.size(); ++l) {
    differences.expect("summary All", lines[l], evalb_out.all.at(lines[l]), all[l]);
    differences.expect("summary len<=40", lines[l], evalb_out.short_ones.at(lines[l]),
                       short_ones[l]);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, EvalbReference,
                         ::testing::Values("parser-dev", "parser-test", "flattened-dev",
                                           "relabelled-test"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace transduce::parse
