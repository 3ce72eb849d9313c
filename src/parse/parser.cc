#include "parse/parser.h"

#include <fmt/format.h>

#include <cctype>

#include "core/error.h"
#include "decode/search_options.h"

namespace transduce::parse {

namespace {

TranslateOptions translate_options(const ParseOptions& o) {
  TranslateOptions t;
  t.search = o.search;
  t.batch_tokens = o.batch_tokens;
  return t;
}

}  // namespace

Parser::Parser(Transformer& model, const Tokenizer& tokenizer, ParseOptions options)
    : model_(model),
      tokenizer_(tokenizer),
      options_(std::move(options)),
      vocab_(tokenizer),
      constraint_(vocab_, options_.max_opens,
                  options_.any_word && options_.scheme != TreeScheme::kPlaceholder,
                  options_.bracket_bonus, options_.scheme),
      translator_(model, tokenizer, translate_options(options_)) {}

std::vector<ParsedSentence> Parser::parse(const std::vector<std::vector<std::string>>& sentences,
                                          int64_t first_line,
                                          const std::function<void(const std::string&)>& warn) {
  const size_t n = sentences.size();
  std::vector<std::vector<int32_t>> pieces(n);
  std::vector<EncodedWords> targets(n);  // what stands for the words the model sees
  std::vector<int64_t> max_len(n);
  const int64_t limit = translator_.source_limit();
  for (size_t i = 0; i < n; ++i) {
    EncodedWords enc = encode_words(tokenizer_, sentences[i]);
    int64_t words = static_cast<int64_t>(sentences[i].size());
    if (static_cast<int64_t>(enc.pieces.size()) > limit) {
      while (words > 0 && enc.word_ends[words - 1] > limit) --words;
      enc.pieces.resize(words > 0 ? static_cast<size_t>(enc.word_ends[words - 1]) : 0);
      if (warn)
        warn(fmt::format(
            "line {}: {} words in {} pieces, more than the model's {}; the model sees the first "
            "{} words",
            first_line + static_cast<int64_t>(i), sentences[i].size(), enc.word_ends.back(), limit,
            words));
    }
    enc.word_ends.resize(static_cast<size_t>(words));
    targets[i] = vocab_.target_words(options_.scheme, enc);
    max_len[i] =
        output_limit(model_.config(), static_cast<int64_t>(enc.pieces.size()) + 1, options_.search);
    pieces[i] = std::move(enc.pieces);
  }
  // The tagged scheme's lexicon, for the constraint: the tag ids each word may take.
  std::vector<std::vector<std::vector<int32_t>>> word_tags(n);
  if (options_.constrained && options_.tag_lexicon && scheme_has_tags(options_.scheme)) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t w = 0; w < targets[i].word_ends.size(); ++w) {
        std::vector<int32_t>& ids = word_tags[i].emplace_back();
        for (const std::string& tag : options_.tag_lexicon->tags_of(escape_word(sentences[i][w])))
          if (const int32_t id = vocab_.tag_id(tag); id >= 0) ids.push_back(id);
      }
    }
  }
  TranslateOptions topts = translate_options(options_);
  if (options_.constrained) {
    topts.search.constrain = [&](int64_t i, std::span<const int32_t> prefix, float* logp) {
      constraint_.apply(prefix, targets[i], max_len[i], logp, word_tags[i]);
    };
  }
  std::vector<std::vector<Translation>> found = translator_.translate_pieces(pieces, topts);

  std::vector<ParsedSentence> out(n);
  for (size_t i = 0; i < n; ++i) {
    ParsedSentence& p = out[i];
    if (!found[i].empty()) {
      p.tokens = std::move(found[i][0].tokens);
      p.score = found[i][0].score;
    }
    std::vector<std::string> words;
    for (const std::string& w : sentences[i]) words.push_back(escape_word(w));
    p.tree = restore(vocab_.decode(p.tokens, options_.scheme), words, &p.repairs);
  }
  return out;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

SearchOptions search_defaults(const ParseSettings& settings) {
  SearchOptions o;
  o.beam = settings.beam;
  o.alpha = settings.alpha;
  o.max_len_a = settings.max_len_a;
  o.max_len_b = settings.max_len_b;
  return o;
}

ParseOptions parse_options(const ParseSettings& settings, const ParseRequest& request) {
  ParseOptions o;
  o.search = search_defaults(settings);
  apply_search_options(request.search, o.search);
  o.batch_tokens = request.batch_tokens;
  o.constrained = !request.free && settings.constrained;
  const std::optional<TreeScheme> scheme = scheme_from_name(settings.scheme);
  if (!scheme) fail("unknown tree scheme '{}' in parse.json", settings.scheme);
  o.scheme = *scheme;
  o.max_opens = settings.max_opens;
  o.any_word = !request.exact_pieces;
  o.bracket_bonus = request.bracket_bonus.value_or(settings.bracket_bonus);
  if (!request.any_tag) o.tag_lexicon = settings.tag_lexicon;
  return o;
}

ParseSettings require_parse_settings(const std::string& model_dir) {
  const std::optional<ParseSettings> settings = read_parse_settings(model_dir);
  if (!settings)
    fail("{}: not a parser (no parse.json): train one with `transduce train --trees`", model_dir);
  return *settings;
}

}  // namespace transduce::parse
