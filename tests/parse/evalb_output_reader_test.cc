// The reader of EVALB's printed output that evalb_reference_test.cc compares against: it keeps
// every value as printed, and a line out of place is an error, not a row or a value lost.
#include "parse/evalb_output_reader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace transduce::testing {
namespace {

// EVALB's layout, from its output on two sentences (the second a length mismatch, status 1).
std::string summary(const std::string& sentences) {
  return "Number of sentence        =      " + sentences +
         "\n"
         "Number of Error sentence  =      1\n"
         "Number of Skip  sentence  =      0\n"
         "Number of Valid sentence  =      1\n"
         "Bracketing Recall         =  75.00\n"
         "Bracketing Precision      = 100.00\n"
         "Bracketing FMeasure       =  85.71\n"
         "Complete match            =   0.00\n"
         "Average crossing          =   0.00\n"
         "No crossing               = 100.00\n"
         "2 or less crossing        = 100.00\n"
         "Tagging accuracy          = 100.00\n";
}

const std::string kTable =
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n"
    "============================================================================\n"
    "   1    4    0   75.00 100.00     3      4    3      0      3     3   100.00\n"
    "   2   41    1    0.00   0.00     0      0    0      0      0     0     0.00\n"
    "============================================================================\n"
    "                 75.00 100.00      3      4    3      0      3     3   100.00\n"
    "=== Summary ===\n"
    "\n"
    "-- All --\n";

TEST(EvalbOutputReader, KeepsEveryValueAsPrinted) {
  const EvalbOutput out =
      read_evalb_output(kTable + summary("2") + "\n-- len<=40 --\n" + summary("1"));
  ASSERT_EQ(out.sentences.size(), 2u);
  EXPECT_EQ(out.sentences[0], (std::vector<std::string>{"1", "4", "0", "75.00", "100.00", "3", "4",
                                                        "3", "0", "3", "3", "100.00"}));
  EXPECT_EQ(out.sentences[1][1], "41");
  EXPECT_EQ(out.sentences[1][2], "1");
  EXPECT_EQ(out.total,
            (std::vector<std::string>{"75.00", "100.00", "3", "4", "3", "0", "3", "3", "100.00"}));
  EXPECT_EQ(out.all.at("Number of sentence"), "2");
  EXPECT_EQ(out.short_ones.at("Number of sentence"), "1");
  EXPECT_EQ(out.all.at("Number of Skip  sentence"), "0");
  EXPECT_EQ(out.all.at("Bracketing FMeasure"), "85.71");
  EXPECT_EQ(out.all.size(), evalb_summary_lines().size());
}

TEST(EvalbOutputReader, ALineOutOfPlaceIsAnError) {
  const std::string whole = kTable + summary("2") + "\n-- len<=40 --\n" + summary("1");
  // A row that lost a column.
  std::string text = whole;
  text.replace(text.find("   41    1"), 10, "   41");
  EXPECT_THROW(read_evalb_output(text), std::runtime_error);
  // No len<=40 block, or one without its last line.
  EXPECT_THROW(read_evalb_output(kTable + summary("2")), std::runtime_error);
  text = whole;
  text.erase(text.rfind("Tagging accuracy"));
  EXPECT_THROW(read_evalb_output(text), std::runtime_error);
  // Output cut inside the table.
  EXPECT_THROW(read_evalb_output(kTable.substr(0, kTable.find("   2   41"))), std::runtime_error);
}

}  // namespace
}  // namespace transduce::testing
