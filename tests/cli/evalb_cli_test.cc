// `transduce evalb` as a script would run it: the summary lines, --json, --hyp, the per-sentence
// table, warnings for sentences EVALB leaves out, and one-line errors with exit 1 for bad input.
// The numbers equal EVALB's (evalb -p COLLINS.prm) on the same files; tests/parse/evalb_test.cc
// works them out rule by rule. The last test holds the command to the real EVALB's output on one
// of the shared data's reference cases.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "parse/evalb_output_reader.h"
#include "support/file_text.h"
#include "support/run_command.h"
#include "support/shared_data.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::lines_of;

// Five sentences: a word mismatch (error), a perfect parse, a tree with nothing but a period
// (skipped), a doubled gold NP the test has once (3 of 4), and a test with NP three times and VP
// twice (3 of 6). Scored: matched 3+3+3 = 9, gold 3+4+3 = 10, test 3+3+6 = 12.
constexpr const char* kGold =
    "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))\n"
    "(TOP (S (NP (DT A) (NN cat)) (VP (VBD sat))))\n"
    "(TOP (S (NP (NP (DT the) (NN man))) (VP (VB go))))\n"
    "(TOP (S (NP (DT the) (NN man)) (VP (VB go))))\n";
constexpr const char* kPred =
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD barked)) (. .)))\n"
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))\n"
    "(TOP (. .))\n"
    "(TOP (S (NP (DT the) (NN man)) (VP (VB go))))\n"
    "(TOP (S (NP (NP (NP (DT the) (NN man)))) (VP (VP (VB go)))))\n";

// Recall 9/10, precision 9/12, F1 2*90*75/165 = 81.82; complete match: sentence 2 of the 3 scored.
constexpr const char* kSummary =
    "sentences = 5\n"
    "sentences scored = 3\n"
    "sentences with errors = 1\n"
    "sentences skipped = 1\n"
    "matched brackets = 9\n"
    "gold brackets = 10\n"
    "test brackets = 12\n"
    "recall = 90.00\n"
    "precision = 75.00\n"
    "F1 = 81.82\n"
    "complete match = 33.33\n"
    "average crossing = 0.00\n"
    "no crossing = 100.00\n"
    "2 or less crossing = 100.00\n"
    "tagging accuracy = 100.00\n";

class EvalbCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_evalb_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    write("gold.txt", kGold);
    write("pred.txt", kPred);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // stdout in .out; stderr kept apart in .err.
  CommandResult run(const std::string& args) const { return testing::run_transduce_apart(args); }

  fs::path dir_;
};

TEST_F(EvalbCommand, PrintsTheSummaryAndWarnsAboutSentencesLeftOut) {
  const CommandResult r = run("evalb --gold " + path("gold.txt") + " < " + path("pred.txt"));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, kSummary);
  // One warning line per sentence left out, naming it and what differs.
  const std::vector<std::string> warnings = lines_of(r.err);
  ASSERT_EQ(warnings.size(), 2u) << r.err;
  EXPECT_EQ(warnings[0], "transduce: warning: sentence 1 (" + path("gold.txt") +
                             ":1, stdin:1) not scored: word mismatch: word 2 is 'dog' in gold but "
                             "'cat' in test");
  EXPECT_TRUE(warnings[1].starts_with("transduce: warning: sentence 3 (" + path("gold.txt") +
                                      ":3, stdin:3) skipped: "))
      << warnings[1];

  // --hyp FILE reads the same trees.
  const CommandResult from_file =
      run("evalb --gold " + path("gold.txt") + " --hyp " + path("pred.txt"));
  ASSERT_EQ(from_file.status, 0) << from_file.out;
  EXPECT_EQ(from_file.out, kSummary);
  EXPECT_NE(from_file.err.find(path("pred.txt") + ":1) not scored"), std::string::npos)
      << from_file.err;
}

TEST_F(EvalbCommand, PerSentenceTableHasEvalbsColumns) {
  const CommandResult r =
      run("evalb --per-sentence --gold " + path("gold.txt") + " --hyp " + path("pred.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u + 5u + 1u + 15u) << r.out;
  EXPECT_EQ(lines[0],
            "  ID Len. Stat  Recall  Prec. Match   Gold Test  Cross  Words  Tags Accuracy");
  EXPECT_EQ(lines[1], std::string(76, '='));
  // EVALB's own lines for these files: id, length, status (0 scored, 1 error, 2 skipped), recall,
  // precision, matched, gold, test, crossing, words, correct tags, tagging accuracy.
  EXPECT_EQ(lines[2],
            "   1    4    1    0.00   0.00     0      0    0      0      0     0     0.00");
  EXPECT_EQ(lines[3],
            "   2    4    0  100.00 100.00     3      3    3      0      3     3   100.00");
  EXPECT_EQ(lines[4],
            "   3    3    2    0.00   0.00     0      0    0      0      0     0     0.00");
  EXPECT_EQ(lines[5],
            "   4    3    0   75.00 100.00     3      4    3      0      3     3   100.00");
  EXPECT_EQ(lines[6],
            "   5    3    0  100.00  50.00     3      3    6      0      3     3   100.00");
  EXPECT_EQ(lines[7], lines[1]);
  std::string summary;
  for (size_t i = 8; i < lines.size(); ++i) summary += lines[i] + "\n";
  EXPECT_EQ(summary, kSummary);
}

TEST_F(EvalbCommand, JsonHasTheSameNumbers) {
  const CommandResult r = run("evalb --json --per-sentence --cutoff 3 --gold " + path("gold.txt") +
                              " < " + path("pred.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("sentences").get<int>(), 5);
  EXPECT_EQ(j.at("scored").get<int>(), 3);
  EXPECT_EQ(j.at("errors").get<int>(), 1);
  EXPECT_EQ(j.at("skipped").get<int>(), 1);
  EXPECT_EQ(j.at("matched_brackets").get<int>(), 9);
  EXPECT_EQ(j.at("gold_brackets").get<int>(), 10);
  EXPECT_EQ(j.at("test_brackets").get<int>(), 12);
  EXPECT_NEAR(j.at("recall").get<double>(), 90.0, 1e-9);
  EXPECT_NEAR(j.at("precision").get<double>(), 75.0, 1e-9);
  EXPECT_NEAR(j.at("f1").get<double>(), 2 * 90.0 * 75.0 / 165.0, 1e-9);
  EXPECT_NEAR(j.at("complete_match").get<double>(), 100.0 / 3.0, 1e-9);
  EXPECT_NEAR(j.at("tagging_accuracy").get<double>(), 100.0, 1e-9);
  // Sentences of at most 3 words (punctuation counted): 3, 4 and 5. One is skipped; the other
  // two match 6 of 7 gold and 9 test brackets: 85.71 and 66.67.
  const nlohmann::json& cut = j.at("cutoff");
  EXPECT_EQ(cut.at("length").get<int>(), 3);
  EXPECT_EQ(cut.at("sentences").get<int>(), 3);
  EXPECT_EQ(cut.at("skipped").get<int>(), 1);
  EXPECT_EQ(cut.at("matched_brackets").get<int>(), 6);
  EXPECT_EQ(cut.at("test_brackets").get<int>(), 9);
  const nlohmann::json& rows = j.at("per_sentence");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].at("status").get<std::string>(), "error");
  EXPECT_TRUE(rows[0].at("problem").get<std::string>().starts_with("word mismatch"));
  EXPECT_EQ(rows[2].at("status").get<std::string>(), "skipped");
  EXPECT_EQ(rows[4].at("status").get<std::string>(), "scored");
  EXPECT_EQ(rows[4].at("test_brackets").get<int>(), 6);
  EXPECT_NEAR(rows[4].at("precision").get<double>(), 50.0, 1e-9);
  EXPECT_FALSE(rows[4].contains("problem"));

  // Text with --cutoff: the same block again, each line prefixed.
  const CommandResult text =
      run("evalb --cutoff 3 --gold " + path("gold.txt") + " < " + path("pred.txt"));
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_TRUE(text.out.starts_with(kSummary)) << text.out;
  EXPECT_NE(text.out.find("\nlen<=3 recall = 85.71\nlen<=3 precision = 66.67\n"), std::string::npos)
      << text.out;
}

TEST_F(EvalbCommand, PlaceholderTagsAreScoredAsEvalbScoresThem) {
  write("xx.txt",
        "(TOP (S (NP (XX The) (XX dog)) (VP (XX barked)) (XX .)))\n"
        "(TOP (S (NP (XX The) (XX cat)) (VP (XX sat)) (XX .)))\n"
        "(TOP (S (NP (XX A) (XX cat)) (VP (XX sat))))\n"
        "(TOP (S (NP (XX the) (XX man)) (VP (XX go))))\n"
        "(TOP (S (NP (XX the) (XX man)) (VP (XX go))))\n");
  // As EVALB: the two periods tagged XX stay words where the gold deletes them, so sentences 1
  // and 2 are length mismatches; the other three match 3 + 3 + 3 of 3 + 4 + 3 gold brackets and
  // 9 test brackets: recall 90.00, precision 100.00; no XX tag is a right tag.
  CommandResult r = run("evalb --gold " + path("gold.txt") + " --hyp " + path("xx.txt"));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("sentences scored = 3\nsentences with errors = 2\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("recall = 90.00\nprecision = 100.00\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tagging accuracy = 0.00\n"), std::string::npos) << r.out;
  const std::vector<std::string> warnings = lines_of(r.err);
  ASSERT_EQ(warnings.size(), 3u) << r.err;
  EXPECT_TRUE(warnings[0].starts_with("transduce: warning: sentence 1 (")) << warnings[0];
  EXPECT_NE(warnings[0].find("length mismatch (3 words to score in gold, 4 in test"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(warnings[2],
            "transduce: warning: 2 sentences were not scored because the predicted tags do not "
            "mark punctuation as the gold tags do; --gold-tags gives the predicted words the gold "
            "tags first (for parsers that predict no tags)");

  // --gold-tags (not EVALB) gives the test words the gold tags: all five scored, 15 of 16 gold
  // brackets and 15 test brackets, every tag right.
  r = run("evalb --gold-tags --gold " + path("gold.txt") + " --hyp " + path("xx.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sentences scored = 5\nsentences with errors = 0\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("recall = 93.75\nprecision = 100.00\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tagging accuracy = 100.00\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// EVALB stops at an error when the count before it is above its MAX_ERROR (COLLINS.prm: 10), so
// at the 12th; -1 never stops.
TEST_F(EvalbCommand, StopsAfterAsManyErrorsAsEvalbAllows) {
  std::string gold, xx;
  for (int i = 0; i < 14; ++i) {
    gold += "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n";
    xx += "(TOP (S (NP (XX The) (XX dog)) (VP (XX barked)) (XX .)))\n";
  }
  write("gold14.txt", gold);
  write("xx14.txt", xx);
  CommandResult r = run("evalb --gold " + path("gold14.txt") + " --hyp " + path("xx14.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 13u) << r.err;  // 12 warnings, then the error
  EXPECT_EQ(lines[12], "transduce: error: " + path("xx14.txt") +
                           ":12: stopped at sentence 12 with 12 sentences not scored for errors, "
                           "as EVALB stops past MAX_ERROR 10 (--max-errors; -1 scores every "
                           "sentence); --gold-tags gives the predicted words the gold tags first "
                           "(for parsers that predict no tags)");
  r = run("evalb --max-errors 0 --gold " + path("gold14.txt") + " --hyp " + path("xx14.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("stopped at sentence 2 with 2 sentences"), std::string::npos) << r.err;
  r = run("evalb --max-errors -1 --gold " + path("gold14.txt") + " --hyp " + path("xx14.txt"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sentences with errors = 14\n"), std::string::npos) << r.out;
  r = run("evalb --max-errors -2 --gold " + path("gold14.txt") + " --hyp " + path("xx14.txt"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--max-errors: Value -2 not in range"), std::string::npos) << r.err;
}

TEST_F(EvalbCommand, TreesSpreadOverLinesAreRead) {
  // .mrg style: one tree over several lines; messages give the line each tree starts on.
  write("gold_mrg.txt",
        "( (S (NP (DT The) (NN dog))\n    (VP (VBD barked))\n    (. .)))\n"
        "( (S (NP (DT The) (NN cat))\n    (VP (VBD sat))\n    (. .)))\n");
  write("pred2.txt",
        "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
        "(TOP (S (NP (DT The) (NN dog)) (VP (VBD sat)) (. .)))\n");
  const CommandResult r = run("evalb --gold " + path("gold_mrg.txt") + " < " + path("pred2.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sentences scored = 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recall = 100.00\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("sentence 2 (" + path("gold_mrg.txt") + ":4, stdin:2)"), std::string::npos)
      << r.err;
}

TEST_F(EvalbCommand, DifferentTreeCountsAreOneErrorLine) {
  write("short.txt", "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n");
  const CommandResult r = run("evalb --gold " + path("gold.txt") + " < " + path("short.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0], "transduce: error: " + path("gold.txt") +
                          " has 5 trees but stdin has 1: the predictions must be the gold "
                          "sentences, in order");
}

TEST_F(EvalbCommand, MalformedInputIsOneErrorLineWithFileAndLine) {
  write("bad_gold.txt",
        "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
        "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))\n");
  CommandResult r = run("evalb --gold " + path("bad_gold.txt") + " < " + path("pred.txt"));
  EXPECT_EQ(r.status, 1);
  std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(
      lines[0].starts_with("transduce: error: " + path("bad_gold.txt") + ":2: unbalanced brackets"))
      << lines[0];

  write("bad_pred.txt", "(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n\n(NN a b)\n");
  r = run("evalb --gold " + path("gold.txt") + " < " + path("bad_pred.txt"));
  EXPECT_EQ(r.status, 1);
  lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(lines[0].starts_with("transduce: error: stdin:3: ")) << lines[0];

  r = run("evalb --gold " + path("missing.txt") + " < " + path("pred.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(path("missing.txt")), std::string::npos);
  EXPECT_NE(run("evalb < " + path("pred.txt")).status, 0);  // no --gold
  EXPECT_NE(run("evalb --cutoff 0 --gold " + path("gold.txt") + " < " + path("pred.txt")).status,
            0);
}

std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

// What a user runs, on one of the real EVALB's reference cases in the shared data: every row of
// --per-sentence and both summaries equal EVALB's output (tests/parse/evalb_reference_test.cc
// compares all four cases through the library).
TEST(EvalbCommandAgainstEvalb, TableAndSummariesEqualEvalbsOnParserDev) {
  const std::string dir = "evalb-reference/parser-dev";
  const std::string gold = testing::shared_data_file(dir + ".gold");
  const std::string pred = testing::shared_data_file(dir + ".pred");
  const testing::EvalbOutput evalb =
      testing::read_evalb_output(testing::read_file(testing::shared_data_file(dir + ".evalb.txt")));

  const CommandResult r = testing::run_transduce_apart("evalb --per-sentence --cutoff 40 --gold " +
                                                       gold + " --hyp " + pred);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // EVALB scores every sentence: no warning
  const std::vector<std::string> lines = lines_of(r.out);
  const size_t rows = evalb.sentences.size();
  // Header and rule, a row per sentence, the closing rule, two summaries of 15 lines.
  ASSERT_EQ(lines.size(), 2 + rows + 1 + 2 * 15) << "lines printed for " << rows << " sentences";
  // Every column of every row, the first 10 differences reported.
  const std::vector<std::string>& columns = testing::evalb_sentence_columns();
  int differing = 0;
  for (size_t i = 0; i < rows; ++i) {
    const std::vector<std::string> row = fields_of(lines[2 + i]);
    ASSERT_EQ(row.size(), columns.size()) << lines[2 + i];
    for (size_t c = 0; c < columns.size(); ++c)
      if (row[c] != evalb.sentences[i][c] && ++differing <= 10)
        ADD_FAILURE() << "parser-dev, sentence " << evalb.sentences[i][0] << ", " << columns[c]
                      << ": EVALB " << evalb.sentences[i][c] << ", transduce evalb " << row[c];
  }
  EXPECT_EQ(differing, 0) << "parser-dev: values of the per-sentence table differing from EVALB's";

  // Our summary lines, NAME = VALUE, against EVALB's of the same meaning.
  std::map<std::string, std::string> ours;
  for (size_t i = 3 + rows; i < lines.size(); ++i) {
    const size_t eq = lines[i].find(" = ");
    ASSERT_NE(eq, std::string::npos) << lines[i];
    ours[lines[i].substr(0, eq)] = lines[i].substr(eq + 3);
  }
  const std::vector<std::pair<std::string, std::string>> same = {
      {"sentences", "Number of sentence"},
      {"sentences with errors", "Number of Error sentence"},
      {"sentences skipped", "Number of Skip  sentence"},
      {"sentences scored", "Number of Valid sentence"},
      {"recall", "Bracketing Recall"},
      {"precision", "Bracketing Precision"},
      {"F1", "Bracketing FMeasure"},
      {"complete match", "Complete match"},
      {"average crossing", "Average crossing"},
      {"no crossing", "No crossing"},
      {"2 or less crossing", "2 or less crossing"},
      {"tagging accuracy", "Tagging accuracy"}};
  for (const auto& [name, evalb_name] : same) {
    EXPECT_EQ(ours[name], evalb.all.at(evalb_name))
        << "parser-dev, summary line '" << name << "' (EVALB's " << evalb_name << ")";
    EXPECT_EQ(ours["len<=40 " + name], evalb.short_ones.at(evalb_name))
        << "parser-dev, summary line 'len<=40 " << name << "' (EVALB's len<=40 " << evalb_name
        << ")";
  }
}

}  // namespace
}  // namespace transduce
