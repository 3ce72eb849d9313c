// Parsing sentences with a trained parser (section 6.3): the words go in, beam search produces the
// linearised tree (constrained to well-formed trees over the sentence's words, or free), and the
// tree is restored over the input words.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/search.h"
#include "decode/translator.h"
#include "parse/linearize.h"
#include "parse/parse_settings.h"
#include "parse/tree.h"
#include "parse/tree_constraint.h"
#include "parse/tree_vocab.h"

namespace transduce::parse {

struct ParseOptions {
  SearchOptions search;  // beam, alpha and the output length limit
  int64_t batch_tokens = 4000;
  bool constrained = true;
  int64_t max_opens = 0;  // TreeConstraint's limit on opening brackets in a row (0: none)
  // The words and tagged schemes: score "a word here" (or its tag) rather than the exact piece
  // (TreeConstraint).
  bool any_word = true;
  float bracket_bonus = 0;  // TreeConstraint's open_bonus (constrained decoding only)
  TreeScheme scheme = TreeScheme::kPlaceholder;  // what the model was trained to write
  // The tagged scheme, constrained: the tags each word may take (null: any tag).
  std::shared_ptr<const TagLexicon> tag_lexicon;
};

struct ParsedSentence {
  // TOP over the sentence's constituents, its words escaped (escape_word); no children for an
  // empty sentence.
  Tree tree;
  float score = 0;              // the search's length-normalised log-probability
  Repairs repairs;              // what restoring the model's output changed (none when constrained)
  std::vector<int32_t> tokens;  // the model's output, without EOS
};

class Parser {
 public:
  // The tokenizer must hold the tree symbols (TreeVocab refuses it otherwise).
  Parser(Transformer& model, const Tokenizer& tokenizer, ParseOptions options);

  // Parses sentences given as their words. A sentence longer than the model takes is cut at a
  // word boundary for the model, with a warning through `warn` naming its line number
  // (first_line + index); its remaining words are attached to the tree as a repair.
  std::vector<ParsedSentence> parse(const std::vector<std::vector<std::string>>& sentences,
                                    int64_t first_line = 1,
                                    const std::function<void(const std::string&)>& warn = nullptr);

  const TreeVocab& vocab() const { return vocab_; }
  const ParseOptions& options() const { return options_; }

 private:
  Transformer& model_;
  const Tokenizer& tokenizer_;
  ParseOptions options_;
  TreeVocab vocab_;
  TreeConstraint constraint_;
  Translator translator_;
};

// What a caller asks of decoding; what it leaves out comes from the parser's parse.json.
struct ParseRequest {
  // Search options (decode/search_options.h) by key, over parse.json's: {"beam": 8}.
  nlohmann::json search = nlohmann::json::object();
  std::optional<float> bracket_bonus;
  bool free = false;          // no tree constraint: outputs are repaired into trees instead
  bool exact_pieces = false;  // the words scheme: score each word's own pieces, not "a word"
  bool any_tag = false;       // the tagged scheme: any tag for any word, not parse.json's lexicon
  int64_t batch_tokens = 4000;
};
// The search options parse.json gives: the paper's beam 21, alpha 0.3, input + 300 tokens unless
// the parser was trained with others.
SearchOptions search_defaults(const ParseSettings& settings);
// The options a parser with `settings` decodes with for `request`.
ParseOptions parse_options(const ParseSettings& settings, const ParseRequest& request);
// MODEL_DIR/parse.json, or an error saying the directory is not a parser.
ParseSettings require_parse_settings(const std::string& model_dir);

// Splits a line into words at whitespace.
std::vector<std::string> split_words(const std::string& line);

}  // namespace transduce::parse
