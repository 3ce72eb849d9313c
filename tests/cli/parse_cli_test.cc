// `transduce vocab --trees`, `train --trees` and `parse` as a user runs them: a parser's model
// directory with its decoding defaults, one tree per input line over exactly its words, the
// summary, and one-line errors for bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parse/linearize.h"
#include "parse/tag_lexicon.h"
#include "parse/tree.h"
#include "parse/tree_data.h"
#include "parse/tree_vocab.h"
#include "support/file_text.h"
#include "support/random_model.h"
#include "support/random_parser.h"
#include "support/run_command.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::lines_of;
using testing::run_shell;
using testing::run_transduce;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class ParseCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::RandomParserDir("parse_cli", 200);
    // A parser trained for a few updates: what matters here is the directory it makes.
    const CommandResult t = run_transduce(
        "train --trees " + dir_->trees() + " --valid-trees " + dir_->trees() + " --vocab " +
        dir_->vocab() + " --output " + trained() +
        " --layers 1 --d-model 32 --d-ff 64 --heads 2 --batch-tokens 3000 --max-steps 3 "
        "--log-every 1");
    train_output_ = new std::string(t.out);
    ASSERT_EQ(t.status, 0) << t.out;
  }
  static void TearDownTestSuite() {
    delete train_output_;
    delete dir_;
  }
  static std::string trained() { return dir_->path() + "/trained"; }
  static std::string path(const std::string& name) { return dir_->path() + "/" + name; }

  static testing::RandomParserDir* dir_;
  static std::string* train_output_;
};
testing::RandomParserDir* ParseCommand::dir_ = nullptr;
std::string* ParseCommand::train_output_ = nullptr;

TEST_F(ParseCommand, WordSwapsAddCopiesOfTheTrainingTrees) {
  const CommandResult r = run_transduce(
      "train --trees " + dir_->trees() + " --vocab " + dir_->vocab() + " --output " +
      path("swapped") +
      " --word-swaps 2 --word-swap-rate 0.5 --layers 1 --d-model 32 --d-ff 64 --heads 2 "
      "--max-steps 1 --tree-scheme words");  // words: every tree's target within 256 tokens
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("training trees: 2 copies added with words of the open-class tags ("),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("training trees: 600 read, 600 kept"), std::string::npos) << r.out;
}

TEST_F(ParseCommand, TrainingOnTreesMakesAParserDirectory) {
  EXPECT_NE(train_output_->find("training trees: 200 read, 200 kept"), std::string::npos)
      << *train_output_;
  const nlohmann::json settings = read_json(trained() + "/parse.json");
  EXPECT_EQ(settings["task"], "parse");
  EXPECT_EQ(settings["scheme"], "tagged");  // the default
  EXPECT_TRUE(settings.contains("tag_lexicon"));
  EXPECT_EQ(settings["decoding"]["beam"], 21);
  EXPECT_NEAR(settings["decoding"]["alpha"].get<double>(), 0.3, 1e-6);
  EXPECT_EQ(settings["decoding"]["max_len_a"], 1.0);
  EXPECT_EQ(settings["decoding"]["max_len_b"], 300);
  EXPECT_EQ(settings["decoding"]["constrained"], true);
  EXPECT_EQ(settings["decoding"]["bracket_bonus"], 0.0);
  EXPECT_EQ(settings["decoding"]["max_opens"],
            parse::max_opens_in_a_row(parse::read_normalised_trees(dir_->trees())));
  // Averaging keeps it a parser.
  const CommandResult a =
      run_transduce("average --last 2 -m " + trained() + " --output " + path("avg"));
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(read_json(path("avg/parse.json")), settings);
}

TEST_F(ParseCommand, ParsesEveryLineIntoATreeOverItsWordsInOrder) {
  const std::vector<std::string> input = {
      "Pierre Vinken will join the board .", "", "  The ( odd )   spacing ,here  ", "Yes",
      "Mr. Vinken is chairman of Elsevier N.V. , the Dutch publishing group ."};
  {
    std::ofstream f(path("in.txt"));
    for (const std::string& l : input) f << l << "\n";
  }
  const CommandResult r = testing::run_transduce_apart(
      "parse -m " + trained() + " --input " + path("in.txt") + " --stats " + path("stats.json"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> out = lines_of(r.out);
  ASSERT_EQ(out.size(), input.size()) << r.out;
  for (size_t i = 0; i < input.size(); ++i) {
    std::vector<std::string> want;
    std::istringstream words(input[i]);
    for (std::string w; words >> w;) want.push_back(parse::escape_word(w));
    if (want.empty()) {
      EXPECT_EQ(out[i], "");
      continue;
    }
    const std::vector<parse::Tree> trees = parse::read_trees(out[i], "output");
    ASSERT_EQ(trees.size(), 1u);
    EXPECT_EQ(trees[0].label, "TOP");
    EXPECT_EQ(trees[0].words(), want) << out[i];
  }
  const std::string& summary = r.err;
  EXPECT_NE(summary.find("parse: 4 sentences, 27 words"), std::string::npos) << summary;
  EXPECT_NE(summary.find("beam 21, constrained); 0 repaired"), std::string::npos) << summary;
  const nlohmann::json stats = read_json(path("stats.json"));
  EXPECT_EQ(stats["sentences"], 4);
  EXPECT_EQ(stats["words"], 27);
  EXPECT_EQ(stats["beam"], 21);
  EXPECT_EQ(stats["constrained"], true);
  EXPECT_EQ(stats["bracket_bonus"], 0.0);
  EXPECT_EQ(stats["repaired_sentences"], 0);

  // Flags override the model's defaults; stdin works as the input.
  const CommandResult free =
      run_transduce("parse -m " + trained() + " --beam 2 --free --max-len-b 5 --stats " +
                        path("free.json") + " < " + path("in.txt"),
                    false);
  ASSERT_EQ(free.status, 0) << free.out;
  EXPECT_EQ(lines_of(free.out).size(), input.size());
  const nlohmann::json fs = read_json(path("free.json"));
  EXPECT_EQ(fs["beam"], 2);
  EXPECT_EQ(fs["constrained"], false);
  EXPECT_EQ(fs["max_len_b"], 5);

  // A bracket bonus from parse.json is used, and the flag overrides it.
  fs::create_directories(path("bonus_parser"));
  for (const char* f : {"config.json", "model.safetensors", "spm.model"})
    fs::copy_file(trained() + "/" + f, path("bonus_parser/") + f,
                  fs::copy_options::overwrite_existing);
  nlohmann::json bonus = read_json(trained() + "/parse.json");
  bonus["decoding"]["bracket_bonus"] = 0.5;
  std::ofstream(path("bonus_parser/parse.json")) << bonus.dump();
  for (const auto& [flags, want] :
       {std::pair<std::string, double>{"", 0.5}, {" --bracket-bonus 1.25", 1.25}}) {
    const CommandResult b =
        run_transduce("parse -m " + path("bonus_parser") + flags + " --beam 2 --stats " +
                          path("bonus.json") + " < " + path("in.txt"),
                      false);
    ASSERT_EQ(b.status, 0) << b.out;
    EXPECT_EQ(read_json(path("bonus.json"))["bracket_bonus"], want) << flags;
  }
}

// The tagged scheme: the parser writes part-of-speech tags, each one its parse.json lexicon allows
// the word (any tag with --any-tag).
TEST_F(ParseCommand, ATaggedParserWritesTheTagsItsLexiconAllows) {
  const std::string tagged = path("tagged");
  const CommandResult t = run_transduce(
      "train --trees " + dir_->trees() + " --vocab " + dir_->vocab() + " --output " + tagged +
      " --tree-scheme tagged --layers 1 --d-model 32 --d-ff 64 --heads 2 --batch-tokens 3000 "
      "--max-steps 2");
  ASSERT_EQ(t.status, 0) << t.out;
  const nlohmann::json settings = read_json(tagged + "/parse.json");
  EXPECT_EQ(settings["scheme"], "tagged");
  const parse::TagLexicon lexicon =
      parse::tag_lexicon_from_json(settings.at("tag_lexicon"), "parse.json");
  EXPECT_EQ(lexicon.tags_of("the"), (std::vector<std::string>{"DT"}));
  EXPECT_EQ(lexicon.tags_of(","), (std::vector<std::string>{","}));
  {
    std::ofstream f(path("tagged_in.txt"));
    f << "Pierre Vinken , 61 years old , will join the board .\nThe zebra sat .\n";
  }
  int64_t outside = 0;
  for (const char* flags : {"", " --any-tag"}) {
    const CommandResult r = testing::run_transduce_apart(
        "parse -m " + tagged + " --beam 2" + flags + " --input " + path("tagged_in.txt"));
    ASSERT_EQ(r.status, 0) << r.err;
    for (const std::string& line : lines_of(r.out)) {
      const parse::Tree tree = parse::read_trees(line, "output").at(0);
      const std::vector<std::string> words = tree.words(), tags = tree.tags();
      for (size_t w = 0; w < words.size(); ++w) {
        const std::vector<std::string> allowed = lexicon.tags_of(words[w]);
        const bool in = std::find(allowed.begin(), allowed.end(), tags[w]) != allowed.end();
        EXPECT_NE(tags[w], "XX");
        if (*flags == '\0') {
          EXPECT_TRUE(in) << words[w] << " tagged " << tags[w];
        } else {
          outside += !in;
        }
      }
    }
  }
  EXPECT_GT(outside, 0);  // random weights, any tag: some outside the lexicon
}

TEST_F(ParseCommand, BadInputGetsOneLineAndAFailingExit) {
  const testing::RandomModelDir translator("parse_cli_translator");
  CommandResult r = run_transduce("parse -m " + translator.model() + " < /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "transduce: error: " + translator.model() +
                       ": not a parser (no parse.json): train one with `transduce train "
                       "--trees`\n");

  std::ofstream(path("bad_utf8.txt")) << "fine words\nbad \xff word\n";
  r = run_transduce("parse -m " + trained() + " --input " + path("bad_utf8.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("transduce: error: " + path("bad_utf8.txt") + ":2: invalid UTF-8 at byte 5"),
            std::string::npos)
      << r.out;

  std::ofstream(path("broken.trees")) << "((S (NP (NN a))))\n((S (NP (NN b))\n";
  r = run_transduce("vocab --trees " + path("broken.trees") + " --vocab-size 100 --output " +
                    path("v2"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "transduce: error: " + path("broken.trees") +
                       ":2: unbalanced brackets: the bracket opened here is never closed\n");
  std::ofstream(path("empty.trees")) << "\n";
  r = run_transduce("vocab --trees " + path("empty.trees") + " --vocab-size 100 --output " +
                    path("v3"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "transduce: error: " + path("empty.trees") + ": no tree in it (empty input)\n");

  const std::string model_flags = " --layers 1 --d-model 32 --d-ff 64 --heads 2 --max-steps 1";
  r = run_transduce("train --trees " + dir_->trees() + " --vocab " + translator.vocab() +
                    " --output " + path("m1") + model_flags);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("not a parsing vocabulary (no 'XX' symbol)"), std::string::npos) << r.out;
  r = run_transduce("train --trees " + dir_->trees() + " --src a --tgt b --vocab " + dir_->vocab() +
                    " --output " + path("m2") + model_flags);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--src and --tgt (parallel text) or --trees (a treebank)"),
            std::string::npos)
      << r.out;
  r = run_transduce("train --src a --tgt b --word-swaps 2 --vocab " + dir_->vocab() + " --output " +
                    path("m3") + model_flags);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "transduce: error: --subtrees and --word-swaps augment a treebank: they go with "
            "--trees\n");

  fs::create_directories(path("broken_parser"));
  for (const char* f : {"config.json", "model.safetensors", "spm.model"})
    fs::copy_file(trained() + "/" + f, path("broken_parser/") + f);
  // A parse.json that is wrong: one line naming the file and what is wrong with it.
  const std::pair<std::string, std::string> broken[] = {
      {R"({"task": "parse", "scheme": "other"})",
       R"(unknown tree scheme 'other' (this transduce knows "xx", "words", "tagged" or "tagged-after"))"},
      {R"({"task": "parse", "scheme": "words", "decoding": {"alpha": -1}})",
       "alpha -1 is not between 0 and 10"},
      {R"({"task": "parse", "scheme": "words", "decoding": {"bracket_bonus": 11}})",
       "bracket_bonus 11 is not between -10 and 10"},
  };
  for (const auto& [settings, says] : broken) {
    std::ofstream(path("broken_parser/parse.json")) << settings;
    r = run_transduce("parse -m " + path("broken_parser") + " < /dev/null");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "transduce: error: " + path("broken_parser/parse.json") + ": " + says + "\n");
  }
  r = run_transduce("parse -m " + trained() + " --alpha -1 < /dev/null");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--alpha"), std::string::npos) << r.out;
}

// `transduce trees`: one tree a line as read, normalised, as words or as targets, from a file or
// stdin, with one-line errors.
TEST(TreesCommand, RewritesATreebankOneTreeALine) {
  testing::TempDir dir("trees_cli");
  const std::string mrg = dir.path() + "/wsj.mrg";
  std::ofstream(mrg) << "( (S (NP-SBJ (NNP Ms.) (NNP Haag))\n"
                        "     (VP (VBZ plays) (NP (-NONE- *T*-1)) (NP (NNP Elianti)))\n"
                        "     (. .)) )\n"
                        "((FRAG (NP (-NONE- *)) (UH Yes) (. !)))\n";
  CommandResult r = run_transduce("trees --input " + mrg, false);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "( (S (NP-SBJ (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (-NONE- *T*-1)) (NP (NNP "
            "Elianti))) (. .)))\n( (FRAG (NP (-NONE- *)) (UH Yes) (. !)))\n");
  r = run_transduce("trees --normalised < " + mrg, false);
  EXPECT_EQ(r.out,
            "(TOP (S (NP (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. .)))\n"
            "(TOP (FRAG (UH Yes) (. !)))\n");
  r = run_transduce("trees --words --input " + mrg, false);
  EXPECT_EQ(r.out, "Ms. Haag plays Elianti .\nYes !\n");
  r = run_transduce("trees --linearized --input " + mrg + " --output " + dir.path() + "/lin.txt");
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(dir.path() + "/lin.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}),
            "(S (NP XX XX )NP (VP XX (NP XX )NP )VP XX )S\n(FRAG XX XX )FRAG\n");

  r = run_transduce("trees --words --normalised --input " + mrg);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "transduce: error: give at most one of --normalised, --words and --linearized\n");
  r = run_transduce("trees < /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "transduce: error: stdin: no tree in it (empty input)\n");
  r = run_shell("printf '((S (NP (NN a)))\\n((S (VP (VB b))' | " + std::string(TRANSDUCE_BINARY) +
                " trees");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "transduce: error: stdin:2: unbalanced brackets: the bracket opened here is never "
            "closed\n");
}

}  // namespace
}  // namespace transduce
