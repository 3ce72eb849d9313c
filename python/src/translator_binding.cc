// transduce.Translator: a model directory loaded once, translating lists of sentences (beam or
// greedy search, n-best lists, attention weights) and scoring given translations; several model
// directories of one vocabulary translate as an ensemble. Each call
// releases the GIL; calls from several Python threads take turns on the model, each using the
// translator's thread count.
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "core/error.h"
#include "core/threads.h"
#include "decode/forced_score.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "decode/translator.h"
#include "model/precision.h"
#include "search_kwargs.h"
#include "text/special_ids.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

// The search options each method takes as keyword arguments (decode/search_options.h).
const std::vector<std::string> kTranslateOptions = {
    "beam",        "alpha",     "nbest",           "max_len_a",          "max_len_b",
    "min_len_a",   "min_len_b", "no_repeat_ngram", "repetition_penalty", "sampling",
    "temperature", "seed",      "alternatives",    "ensemble_mean",      "max_input_len",
    "long_input"};
const std::vector<std::string> kScoreOptions = {"alpha", "max_input_len", "long_input"};

}  // namespace

namespace {

struct Attention {
  std::vector<int32_t> source_ids, target_ids;
  std::vector<std::string> source_pieces, target_pieces, target_input_pieces;
  py::array_t<float> encoder_self, decoder_self, cross;  // [layers, heads, queries, keys]
};

struct PyTranslation {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<std::string> pieces;
  float score = 0, log_prob = 0;
  py::array_t<float> token_log_probs;
  std::optional<Attention> attention;
  bool constraints_unmet = false;
  std::vector<std::pair<int64_t, int64_t>> alignment;
};

struct PyPairScore {
  float log_prob = 0, score = 0;
  py::array_t<float> token_log_probs;
  std::vector<std::string> pieces;  // the target's, then EOS's
};

std::vector<std::string> pieces_of(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int32_t id : ids) out.push_back(tok.piece(id));
  return out;
}

// One tensor per layer, each [H, Q, K], as one array [layers, H, Q, K].
py::array_t<float> stack_layers(const std::vector<Tensor>& layers) {
  if (layers.empty()) return py::array_t<float>(std::vector<py::ssize_t>{0, 0, 0, 0});
  const Tensor& first = layers.front();
  py::array_t<float> out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(layers.size()),
                                                  first.dim(0), first.dim(1), first.dim(2)});
  float* dst = out.mutable_data();
  for (const Tensor& t : layers) {
    const Tensor c = t.is_contiguous() ? t : t.clone();
    std::memcpy(dst, c.f32(), c.nbytes());
    dst += c.numel();
  }
  return out;
}

Attention to_python(const AttentionMaps& maps, const Tokenizer& tok) {
  Attention a;
  a.source_ids = maps.source;
  a.target_ids = maps.target;
  a.source_pieces = pieces_of(tok, maps.source);
  a.target_pieces = pieces_of(tok, maps.target);
  a.target_input_pieces = pieces_of(tok, maps.target_input());
  a.encoder_self = stack_layers(maps.encoder_self);
  a.decoder_self = stack_layers(maps.decoder_self);
  a.cross = stack_layers(maps.cross);
  return a;
}

class PyTranslator {
 public:
  // One model directory, or several translating as an ensemble (translate -m A -m B).
  PyTranslator(const std::variant<std::string, std::vector<std::string>>& model_dirs, int threads,
               const std::optional<std::string>& compute_type, int64_t batch_tokens)
      : threads_(threads > 0 ? threads : num_cores()),
        members_(load_ensemble(
            std::holds_alternative<std::string>(model_dirs)
                ? std::vector<std::string>{std::get<std::string>(model_dirs)}
                : std::get<std::vector<std::string>>(model_dirs),
            compute_type ? std::optional(parse_compute_type(*compute_type)) : std::nullopt)),
        loaded_(*members_.front()) {
    // BLAS's count is one for the process, as the command line's --threads sets it.
    if (threads > 0) set_threads(threads);
    TranslateOptions options;
    options.batch_tokens = batch_tokens;
    translator_ =
        std::make_unique<Translator>(ensemble_models(members_), loaded_.tokenizer(), options);
  }

  py::object translate(const std::vector<std::string>& texts, bool return_attention,
                       bool return_alignment,
                       const std::optional<std::vector<std::string>>& target_prefix,
                       const std::optional<std::vector<std::vector<std::string>>>& constraints,
                       const py::kwargs& search) {
    const TranslateOptions options =
        options_for(return_attention, return_alignment, search, "translate");
    if (target_prefix && target_prefix->size() != texts.size())
      fail("target_prefix holds {} prefixes for {} texts", target_prefix->size(), texts.size());
    if (constraints && constraints->size() != texts.size())
      fail("constraints holds {} lists for {} texts", constraints->size(), texts.size());
    std::vector<std::string> warnings;
    std::vector<std::vector<Translation>> found;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      ScopedOmpThreads omp(threads_);
      translator_->set_options(options);
      found = translator_->translate(
          texts, 1, [&](const std::string& w) { warnings.push_back(w); },
          target_prefix.value_or(std::vector<std::string>{}),
          constraints.value_or(std::vector<std::vector<std::string>>{}));
    }
    warn_python(warnings);
    return results(std::move(found), outputs_per_sentence(options.search));
  }

  py::object translate_pieces(
      const std::vector<std::vector<int32_t>>& sources, bool return_attention,
      bool return_alignment, const std::optional<std::vector<std::vector<int32_t>>>& target_prefix,
      const std::optional<std::vector<std::vector<std::vector<int32_t>>>>& constraints,
      const py::kwargs& search) {
    const TranslateOptions options =
        options_for(return_attention, return_alignment, search, "translate_pieces");
    if (target_prefix && target_prefix->size() != sources.size())
      fail("target_prefix holds {} prefixes for {} sources", target_prefix->size(), sources.size());
    if (constraints && constraints->size() != sources.size())
      fail("constraints holds {} lists for {} sources", constraints->size(), sources.size());
    std::vector<SentenceControls> controls;
    for (size_t i = 0; (target_prefix || constraints) && i < sources.size(); ++i)
      controls.push_back({target_prefix ? (*target_prefix)[i] : std::vector<int32_t>{}, i,
                          constraints ? (*constraints)[i] : std::vector<std::vector<int32_t>>{}});
    std::vector<std::vector<Translation>> found;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      ScopedOmpThreads omp(threads_);
      found = translator_->translate_pieces(sources, options, controls);
    }
    return results(std::move(found), outputs_per_sentence(options.search));
  }

  std::vector<PyPairScore> score(const std::vector<std::string>& sources,
                                 const std::vector<std::string>& targets, int64_t batch_tokens,
                                 const py::kwargs& search) {
    const SearchOptions options = with_search_kwargs({}, search, kScoreOptions, "score");
    if (members_.size() > 1)
      fail("score takes one model: this translator is an ensemble of {}", members_.size());
    PiecePairs pairs;
    std::vector<PairScore> scores;
    std::vector<std::string> warnings;
    {
      py::gil_scoped_release release;
      pairs = encode_pairs(
          loaded_.tokenizer(), loaded_.config(), sources, targets,
          [](int side, size_t i) {
            return fmt::format("{}[{}]", side == 0 ? "sources" : "targets", i);
          },
          options, [&](const std::string& w) { warnings.push_back(w); });
      std::lock_guard<std::mutex> lock(mutex_);
      ScopedOmpThreads omp(threads_);
      scores = score_pairs(members_.front()->model(), pairs.sources, pairs.targets, options.alpha,
                           batch_tokens);
    }
    warn_python(warnings);
    std::vector<PyPairScore> out;
    for (size_t i = 0; i < scores.size(); ++i) {
      PyPairScore s{scores[i].log_prob, scores[i].score,
                    py::array_t<float>(static_cast<py::ssize_t>(scores[i].token_log_probs.size()),
                                       scores[i].token_log_probs.data()),
                    pieces_of(loaded_.tokenizer(), pairs.targets[i])};
      s.pieces.push_back(loaded_.tokenizer().piece(kEosId));
      out.push_back(std::move(s));
    }
    return out;
  }

  const LoadedModel& loaded() const { return loaded_; }
  int threads() const { return threads_; }
  std::vector<std::string> model_dirs() const {
    std::vector<std::string> dirs;
    for (const auto& m : members_) dirs.push_back(m->dir());
    return dirs;
  }

 private:
  TranslateOptions options_for(bool attention, bool alignment, const py::kwargs& search,
                               const char* function) const {
    TranslateOptions o = translator_->options();
    o.search = with_search_kwargs(SearchOptions{}, search, kTranslateOptions, function);
    o.attention = attention;
    o.alignment = alignment;
    check_search_options(o.search);
    return o;
  }

  // One output a sentence: the best translation of each input; else a list for each (the n-best,
  // the samples or the alternatives).
  py::object results(std::vector<std::vector<Translation>> found, int64_t outputs) const {
    const Tokenizer& tok = loaded_.tokenizer();
    py::list out;
    for (std::vector<Translation>& hyps : found) {
      py::list each;
      for (Translation& t : hyps) {
        PyTranslation p{std::move(t.text),
                        t.tokens,
                        pieces_of(tok, t.tokens),
                        t.score,
                        t.log_prob,
                        py::array_t<float>(static_cast<py::ssize_t>(t.token_log_probs.size()),
                                           t.token_log_probs.data()),
                        std::nullopt,
                        t.constraints_unmet,
                        t.alignment};
        if (t.attention) p.attention = to_python(*t.attention, tok);
        each.append(py::cast(std::move(p)));
      }
      if (outputs == 1) {
        out.append(each[0]);
      } else {
        out.append(each);
      }
    }
    return out;
  }

  int threads_;
  std::vector<std::unique_ptr<LoadedModel>> members_;
  const LoadedModel& loaded_;  // the first member: its tokenizer and attention
  std::unique_ptr<Translator> translator_;
  std::mutex mutex_;  // one search at a time on the model and its arenas
};

}  // namespace

void register_translator(py::module_& m) {
  py::class_<Attention>(m, "Attention",
                        "Every layer's and head's attention weights behind one translation, as "
                        "arrays [layers, heads, queries, keys] whose rows sum to 1.")
      .def_readonly("source_ids", &Attention::source_ids, "the source's ids, then EOS")
      .def_readonly("target_ids", &Attention::target_ids, "the output's ids, then EOS")
      .def_readonly("source_pieces", &Attention::source_pieces)
      .def_readonly("target_pieces", &Attention::target_pieces,
                    "what each decoder position produced: the output's pieces, then EOS")
      .def_readonly("target_input_pieces", &Attention::target_input_pieces,
                    "what each decoder position was fed: BOS, then the output")
      .def_readonly("encoder_self", &Attention::encoder_self, "[layers, heads, source, source]")
      .def_readonly("decoder_self", &Attention::decoder_self,
                    "[layers, heads, target, target], zero above the diagonal")
      .def_readonly("cross", &Attention::cross, "[layers, heads, target, source]");

  py::class_<PyTranslation>(m, "Translation", "One translation of one input.")
      .def_readonly("text", &PyTranslation::text)
      .def_readonly("tokens", &PyTranslation::tokens, "its vocabulary ids, without EOS")
      .def_readonly("pieces", &PyTranslation::pieces, "its pieces as strings")
      .def_readonly("score", &PyTranslation::score,
                    "log-probability / ((5 + tokens + 1) / 6)^alpha, EOS counted")
      .def_readonly("log_prob", &PyTranslation::log_prob, "the sum of token_log_probs")
      .def_readonly("token_log_probs", &PyTranslation::token_log_probs,
                    "the search's log-probability of each token, then EOS's (float32)")
      .def_readonly("alignment", &PyTranslation::alignment,
                    "(source word, target word) pairs from attention (return_alignment=True; "
                    "transduce translate --alignment)")
      .def_readonly("constraints_unmet", &PyTranslation::constraints_unmet,
                    "no output could hold every constraint within the length limit: this "
                    "translation is empty")
      .def_readonly("attention", &PyTranslation::attention,
                    "the attention weights (best translations, return_attention=True), or None")
      .def("__repr__", [](const PyTranslation& t) {
        return fmt::format("transduce.Translation(text={}, score={:.4f})",
                           py::repr(py::str(t.text)).cast<std::string>(), t.score);
      });

  py::class_<PyPairScore>(m, "PairScore", "The model's score of a given translation.")
      .def_readonly("log_prob", &PyPairScore::log_prob, "the sum over the target's tokens and EOS")
      .def_readonly("score", &PyPairScore::score,
                    "log_prob / ((5 + tokens + 1) / 6)^alpha: the beam search's score")
      .def_readonly("token_log_probs", &PyPairScore::token_log_probs,
                    "one per target token, then EOS's (float32)")
      .def_readonly("pieces", &PyPairScore::pieces, "the target's pieces, then EOS")
      .def("__repr__", [](const PyPairScore& s) {
        return fmt::format("transduce.PairScore(log_prob={:.4f}, score={:.4f})", s.log_prob,
                           s.score);
      });

  static const std::string translate_doc =
      "Translates each text: with one output a sentence its best translation, else a list (up to "
      "nbest best first, nbest samples, or the alternatives). target_prefix: a text each "
      "translation starts with, one per text (\"\" for none). constraints: a list of phrases "
      "each translation must hold, one list per text (beam search with dynamic beam allocation; "
      "a text none of whose outputs can hold them gets an empty translation whose "
      "constraints_unmet is True, with a UserWarning). An empty text gives an empty "
      "translation; a text longer than the model takes is cut, with a UserWarning. The search "
      "options (keyword arguments):" +
      search_kwargs_doc(kTranslateOptions, SearchOptions{});
  static const std::string score_doc =
      "The model's log-probability of each target given its source (transduce score-pairs); "
      "the score's length penalty:" +
      search_kwargs_doc(kScoreOptions, SearchOptions{});
  register_search_options(m);
  py::class_<PyTranslator>(m, "Translator", "A model directory loaded for translation and scoring.")
      .def(py::init<const std::variant<std::string, std::vector<std::string>>&, int,
                    const std::optional<std::string>&, int64_t>(),
           py::arg("model_dir"), py::arg("threads") = 0, py::arg("compute_type") = py::none(),
           py::arg("batch_tokens") = 4000)
      .def("translate", &PyTranslator::translate, py::arg("texts"), py::kw_only(),
           py::arg("return_attention") = false, py::arg("return_alignment") = false,
           py::arg("target_prefix") = py::none(), py::arg("constraints") = py::none(),
           translate_doc.c_str())
      .def("translate_pieces", &PyTranslator::translate_pieces, py::arg("sources"), py::kw_only(),
           py::arg("return_attention") = false, py::arg("return_alignment") = false,
           py::arg("target_prefix") = py::none(), py::arg("constraints") = py::none(),
           "The same for sources (and target prefixes and constraints) already in vocabulary ids "
           "(without EOS).")
      .def("score", &PyTranslator::score, py::arg("sources"), py::arg("targets"), py::kw_only(),
           py::arg("batch_tokens") = 2000, score_doc.c_str())
      .def_property_readonly("model_dir", [](const PyTranslator& t) { return t.loaded().dir(); })
      .def_property_readonly("model_dirs", &PyTranslator::model_dirs,
                             "every member's directory (one unless an ensemble)")
      .def_property_readonly("step", [](const PyTranslator& t) { return t.loaded().step(); })
      .def_property_readonly("threads", &PyTranslator::threads)
      .def_property_readonly("config",
                             [](const PyTranslator& t) {
                               const nlohmann::json j = t.loaded().config();
                               return py::module_::import("json").attr("loads")(j.dump());
                             })
      .def_property_readonly("tokenizer", [](const PyTranslator& t) {
        return Tokenizer(t.loaded().tokenizer().path());
      });
}

}  // namespace transduce::python
