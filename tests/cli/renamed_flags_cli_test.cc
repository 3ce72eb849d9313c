// The command line's one vocabulary: the renamed flags work under their new names in every
// subcommand, and the old names are refused with one line that gives the new one.
#include <gtest/gtest.h>

#include <string>

#include "support/run_command.h"

namespace transduce {
namespace {

using testing::run_transduce;

TEST(RenamedFlags, OldNamesAreRefusedWithTheNewOne) {
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"train --out m --max-steps 1", "train: --out is now --output"},
      {"train --precision=bf16", "train: --precision is now --compute-type"},
      {"vocab --input a --size 100 --output v", "vocab: --size is now --vocab-size"},
      {"vocab --input a --type unigram", "vocab: --type is now --vocab-type"},
      {"vocab --input a --max-sentences 5", "vocab: --max-sentences is now --max-lines"},
      {"average -m m --last 2 --out a", "average: --out is now --output"},
      {"quantize -m m --output q --type bf16", "quantize: --type is now --compute-type"},
      {"evalb --gold g --pred p", "evalb: --pred is now --hyp"},
      {"attention -m m --src hello --output a.html", "attention: --src is now --sentence"},
      {"attention --from a.json --html a.html", "attention: --html is now --output"},
      {"params --vocab 8000", "params: --vocab is now --vocab-size"},
      {"bench train --batch 4", "bench train: --batch is now --batch-sentences"},
      {"bench translate --vocab 100", "bench translate: --vocab is now --vocab-size"},
  };
  for (const auto& c : cases) testing::expect_one_line_error(run_transduce(c.args), c.says);
  // The same words are no old spelling in the subcommands where they always meant this: score
  // and score-pairs keep --src; translate, parse and trees always said --output.
  EXPECT_NE(run_transduce("score-pairs --help").out.find("--src"), std::string::npos);
}

// Where a flag names the same idea, every subcommand spells it the same way.
TEST(RenamedFlags, OneSpellingForEachIdea) {
  const struct {
    const char* command;
    const char* flags[3];
  } expected[] = {
      {"train", {"-o,--output", "--compute-type", "--config"}},
      {"vocab", {"-o,--output", "--vocab-size", "--vocab-type"}},
      {"average", {"-m,--model", "-o,--output", nullptr}},
      {"quantize", {"-m,--model", "-o,--output", "--compute-type"}},
      {"translate", {"-m,--model", "-o,--output", "--compute-type"}},
      {"parse", {"-m,--model", "-o,--output", nullptr}},
      {"trees", {"-o,--output", nullptr, nullptr}},
      {"score-pairs", {"-m,--model", "-o,--output", "--compute-type"}},
      {"attention", {"-m,--model", "-o,--output", "--attention"}},
      {"evalb", {"--hyp", "--json", nullptr}},
      {"score", {"--hyp", "--json", nullptr}},
      {"params", {"--vocab-size", nullptr, nullptr}},
      {"bench train", {"--vocab-size", "--batch-sentences", "--compute-type"}},
      {"bench translate", {"--vocab-size", "--batch-sentences", "--compute-type"}},
  };
  for (const auto& e : expected) {
    const testing::CommandResult help = run_transduce(std::string(e.command) + " --help");
    ASSERT_EQ(help.status, 0) << help.out;
    for (const char* flag : e.flags) {
      if (flag == nullptr) continue;
      EXPECT_NE(help.out.find(std::string("  ") + flag + " "), std::string::npos)
          << e.command << " has no " << flag << ":\n"
          << help.out;
    }
  }
}

}  // namespace
}  // namespace transduce
