// The public Parser over the library's parse::Parser, with the model's parse.json settings.
#include <mutex>

#include "api/errors.h"
#include "decode/loaded_model.h"
#include "parse/parser.h"

namespace transduce::api {

struct Parser::Impl {
  explicit Impl(const std::string& dir)
      : loaded(dir), settings(parse::require_parse_settings(dir)) {}
  LoadedModel loaded;
  parse::ParseSettings settings;
  std::mutex mutex;  // one search at a time on the model
};

Parser::Parser(const std::string& model_dir)
    : impl_(translating_errors([&] { return std::make_unique<Impl>(model_dir); })) {}

Parser::~Parser() = default;
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;

std::vector<std::string> Parser::parse(const std::vector<std::string>& sentences) {
  return translating_errors([&] {
    std::vector<std::vector<std::string>> words;
    for (const std::string& s : sentences) words.push_back(parse::split_words(s));
    std::lock_guard<std::mutex> lock(impl_->mutex);
    parse::Parser parser(impl_->loaded.model(), impl_->loaded.tokenizer(),
                         parse::parse_options(impl_->settings, parse::ParseRequest{}));
    std::vector<std::string> trees;
    for (const parse::ParsedSentence& p : parser.parse(words))
      trees.push_back(p.tree.children.empty() ? std::string() : parse::to_string(p.tree));
    return trees;
  });
}

}  // namespace transduce::api
