// transduce.Parser: a parser's model directory (one trained with `transduce train --trees`) loaded
// once, parsing lists of sentences into Penn Treebank brackets with the decoding defaults of its
// parse.json, as `transduce parse` does. Each call releases the GIL; calls from several Python
// threads take turns on the model.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "core/threads.h"
#include "decode/loaded_model.h"
#include "parse/parser.h"
#include "search_kwargs.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

// The search options parse() takes as keyword arguments (decode/search_options.h).
const std::vector<std::string> kParseSearchOptions = {"beam", "alpha", "max_len_a", "max_len_b"};

}  // namespace

namespace {

struct PyParse {
  std::string tree;  // "(TOP ...)", or "" for an empty sentence
  float score = 0;
  std::vector<int32_t> tokens;
  parse::Repairs repairs;
};

class PyParser {
 public:
  PyParser(const std::string& model_dir, int threads, int64_t batch_tokens)
      : threads_(threads > 0 ? threads : num_cores()),
        loaded_(model_dir),
        settings_(parse::require_parse_settings(model_dir)),
        batch_tokens_(batch_tokens) {
    if (threads > 0) set_threads(threads);
    if (batch_tokens <= 0) fail("batch_tokens must be positive, got {}", batch_tokens);
  }

  std::vector<PyParse> parse(const std::vector<std::string>& sentences, bool free,
                             std::optional<float> bracket_bonus, const std::string& word_score,
                             bool any_tag, const py::kwargs& search) {
    if (word_score != "any" && word_score != "pieces")
      fail("word_score must be 'any' or 'pieces', got '{}'", word_score);
    parse::ParseRequest request;
    request.search = search_overrides(search, kParseSearchOptions, "parse");
    request.free = free;
    request.bracket_bonus = bracket_bonus;
    request.exact_pieces = word_score == "pieces";
    request.any_tag = any_tag;
    request.batch_tokens = batch_tokens_;
    std::vector<std::string> warnings;
    std::vector<parse::ParsedSentence> parsed;
    {
      py::gil_scoped_release release;
      std::vector<std::vector<std::string>> words;
      words.reserve(sentences.size());
      for (const std::string& s : sentences) words.push_back(parse::split_words(s));
      std::lock_guard<std::mutex> lock(mutex_);
      ScopedOmpThreads omp(threads_);
      parse::Parser parser(loaded_.model(), loaded_.tokenizer(),
                           parse::parse_options(settings_, request));
      parsed = parser.parse(words, 1, [&](const std::string& w) { warnings.push_back(w); });
    }
    warn_python(warnings);
    std::vector<PyParse> out;
    out.reserve(parsed.size());
    for (parse::ParsedSentence& p : parsed)
      out.push_back({p.tree.children.empty() ? std::string() : parse::to_string(p.tree), p.score,
                     std::move(p.tokens), p.repairs});
    return out;
  }

  const LoadedModel& loaded() const { return loaded_; }
  const parse::ParseSettings& settings() const { return settings_; }
  int threads() const { return threads_; }

 private:
  int threads_;
  LoadedModel loaded_;
  parse::ParseSettings settings_;
  int64_t batch_tokens_;
  std::mutex mutex_;  // one search at a time on the model
};

}  // namespace

void register_parser(py::module_& m) {
  py::class_<parse::Repairs>(m, "Repairs",
                             "What restoring the model's output into a tree changed (all 0 when "
                             "decoding was constrained to well-formed trees).")
      .def_readonly("unclosed", &parse::Repairs::unclosed, "brackets closed at the end")
      .def_readonly("unopened", &parse::Repairs::unopened, "closing brackets dropped")
      .def_readonly("mismatched", &parse::Repairs::mismatched,
                    "closing brackets naming another label than the open one")
      .def_readonly("extra_slots", &parse::Repairs::extra_slots, "word slots beyond the words")
      .def_readonly("missing_words", &parse::Repairs::missing_words,
                    "words without a slot, attached at the end")
      .def_readonly("empty", &parse::Repairs::empty, "constituents without a word, dropped")
      .def_property_readonly("total", &parse::Repairs::total)
      .def("__repr__", [](const parse::Repairs& r) {
        return fmt::format(
            "transduce.Repairs(unclosed={}, unopened={}, mismatched={}, extra_slots={}, "
            "missing_words={}, empty={})",
            r.unclosed, r.unopened, r.mismatched, r.extra_slots, r.missing_words, r.empty);
      });

  py::class_<PyParse>(m, "Parse", "One sentence's constituency tree.")
      .def_readonly("tree", &PyParse::tree,
                    "Penn Treebank brackets under TOP over the sentence's words; '' when empty")
      .def_readonly("score", &PyParse::score, "the search's length-normalised log-probability")
      .def_readonly("tokens", &PyParse::tokens, "the model's output ids, without EOS")
      .def_readonly("repairs", &PyParse::repairs)
      .def("__repr__", [](const PyParse& p) {
        return fmt::format("transduce.Parse(tree={}, score={:.4f})",
                           py::repr(py::str(p.tree)).cast<std::string>(), p.score);
      });

  static const std::string parse_doc =
      "Parses sentences (words separated by spaces). Search options left out or None come from "
      "the model's parse.json (the paper's beam 21, alpha 0.3, input + 300 tokens):" +
      search_kwargs_doc(kParseSearchOptions, parse::search_defaults(parse::ParseSettings{}));
  py::class_<PyParser>(m, "Parser",
                       "A parser's model directory (trained with `transduce train --trees`) "
                       "loaded for parsing.")
      .def(py::init<const std::string&, int, int64_t>(), py::arg("model_dir"),
           py::arg("threads") = 0, py::arg("batch_tokens") = 4000)
      .def("parse", &PyParser::parse, py::arg("sentences"), py::kw_only(), py::arg("free") = false,
           py::arg("bracket_bonus") = py::none(), py::arg("word_score") = "any",
           py::arg("any_tag") = false, parse_doc.c_str())
      .def_property_readonly("model_dir", [](const PyParser& p) { return p.loaded().dir(); })
      .def_property_readonly("threads", &PyParser::threads)
      .def_property_readonly("beam", [](const PyParser& p) { return p.settings().beam; })
      .def_property_readonly("alpha", [](const PyParser& p) { return p.settings().alpha; })
      .def_property_readonly("scheme", [](const PyParser& p) { return p.settings().scheme; });
}

}  // namespace transduce::python
