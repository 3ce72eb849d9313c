// transduce's public C++ API: load a model directory and translate, score translations, parse,
// and compute corpus BLEU and chrF, as the `transduce` command does. This header and the shared
// library libtransduce are what `cmake --install` puts in place; a project uses them through
// find_package(transduce) and target_link_libraries(app transduce::transduce). Nothing here
// exposes the library's internals: they may change between releases, this may not.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#define TRANSDUCE_API __attribute__((visibility("default")))

namespace transduce::api {

// What every function here throws for bad input (a missing file, a corrupt model, an option out
// of range): one line saying what is wrong and where.
class TRANSDUCE_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// The number of threads translation and parsing use from now on, for the whole process (0: all
// cores). Returns the number set.
TRANSDUCE_API int set_threads(int threads);

// `transduce translate`'s search options, with its defaults.
struct TranslateOptions {
  int beam = 4;            // 1: greedy search
  float alpha = 0.6f;      // length penalty exponent
  int nbest = 1;           // hypotheses returned per sentence (at most beam)
  float max_len_a = 1.0f;  // output length limit: a * source tokens + b
  int max_len_b = 50;
  int64_t batch_tokens = 4000;  // source tokens translated together
  // A sentence of more subword pieces than max_input_len (0: than the model takes) is refused
  // (long_input "refuse": translate throws naming it) or cut to them ("truncate").
  int64_t max_input_len = 0;
  std::string long_input = "refuse";
};

struct Translation {
  std::string text;
  float score = 0;  // the length-normalised log-probability the search ranked by
};

// `transduce score-pairs`: a given translation's log-probability under the model.
struct PairScore {
  float log_prob = 0;  // over the target's tokens and the end of sentence
  float score = 0;     // log_prob normalised by the length penalty, as the search scores
};

class TRANSDUCE_API Translator {
 public:
  // A model directory made by `transduce train` (or average, quantize), computing in
  // `compute_type`: "fp32", "bf16", "int8", or "" for the model's own type. Several directories
  // of one vocabulary translate as an ensemble.
  explicit Translator(const std::string& model_dir, const std::string& compute_type = "");
  explicit Translator(const std::vector<std::string>& model_dirs,
                      const std::string& compute_type = "");
  ~Translator();
  Translator(Translator&&) noexcept;
  Translator& operator=(Translator&&) noexcept;

  // For each sentence, up to options.nbest translations, best first, in input order. A sentence
  // over the input limit is refused or cut, as options.long_input says.
  std::vector<std::vector<Translation>> translate(const std::vector<std::string>& sentences,
                                                  const TranslateOptions& options = {});
  // The score of each target as a translation of its source (one model, not an ensemble).
  std::vector<PairScore> score(const std::vector<std::string>& sources,
                               const std::vector<std::string>& targets, float alpha = 0.6f);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `transduce parse`: a parser's model directory (trained with `transduce train --trees`),
// decoding with its parse.json's settings.
class TRANSDUCE_API Parser {
 public:
  explicit Parser(const std::string& model_dir);
  ~Parser();
  Parser(Parser&&) noexcept;
  Parser& operator=(Parser&&) noexcept;

  // Each sentence (words separated by spaces) as a Penn Treebank tree, "(TOP ...)"; an empty
  // sentence gives "".
  std::vector<std::string> parse(const std::vector<std::string>& sentences);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Corpus BLEU and chrF as sacreBLEU 2.x computes them (its default options), against one or more
// reference streams, each with a line per hypothesis. `text` is what `transduce score` prints.
struct CorpusScore {
  double score = 0;
  std::string text;
};
TRANSDUCE_API CorpusScore bleu(const std::vector<std::string>& hypotheses,
                               const std::vector<std::vector<std::string>>& references);
TRANSDUCE_API CorpusScore chrf(const std::vector<std::string>& hypotheses,
                               const std::vector<std::vector<std::string>>& references);

}  // namespace transduce::api
