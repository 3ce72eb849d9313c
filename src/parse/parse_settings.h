// MODEL_DIR/parse.json: what makes a model directory a parser. It names the tree linearisation the
// model was trained on and its decoding defaults (section 6.3: beam 21, alpha 0.3, at most
// input + 300 output tokens), so `transduce parse -m DIR` decodes as intended without flags.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "parse/tag_lexicon.h"

namespace transduce::parse {

struct ParseSettings {
  // The target: labelled brackets with each word as the slot XX ("xx"), as itself ("words"), or as
  // its tag and itself ("tagged"): parse/tree_vocab.h.
  std::string scheme = "xx";
  int beam = 21;
  float alpha = 0.3f;
  float max_len_a = 1.0f;  // output tokens <= a * source tokens + b
  int max_len_b = 300;
  bool constrained = true;  // decode only well-formed trees over the input's words
  // The constraint's most opening brackets in a row: the most the training trees have before a
  // word (0: no limit).
  int max_opens = 0;
  // Added to the log-probability of each opening bracket (TreeConstraint's open_bonus): above 0
  // the parser writes more constituents. The recipe chooses it on the dev set.
  float bracket_bonus = 0.0f;
  // The tagged scheme: the tags each word may take (null: any tag).
  std::shared_ptr<const TagLexicon> tag_lexicon;
};

// Written atomically. Reading: nullopt when the directory has no parse.json (not a parser); a
// malformed file or an unknown scheme is an error naming the file.
void write_parse_settings(const std::string& model_dir, const ParseSettings& settings);
std::optional<ParseSettings> read_parse_settings(const std::string& model_dir);

}  // namespace transduce::parse
