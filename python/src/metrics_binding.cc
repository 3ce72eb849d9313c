// transduce.bleu and transduce.chrf: corpus scores equal to sacreBLEU 2.x's (and to `transduce
// score`'s), with their signatures.
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/references.h"
#include "metrics/tokenize.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

struct BleuResult {
  metrics::BleuScore s;
  std::string signature;
};

struct ChrfResult {
  metrics::ChrfScore s;
  std::string signature;
};

// Hypotheses and reference streams as `transduce score` reads them from files: trailing
// whitespace stripped. `refs` is one stream (a list of str) or several (a list of lists).
metrics::ScoredText segments(const std::vector<std::string>& hyps, const py::sequence& refs) {
  if (py::len(refs) > 0 && py::isinstance<py::str>(refs[0]))
    return metrics::scored_text(hyps, {refs.cast<std::vector<std::string>>()});
  return metrics::scored_text(hyps, refs.cast<metrics::ReferenceStreams>());
}

}  // namespace

void register_metrics(py::module_& m) {
  py::class_<BleuResult>(m, "BLEUScore", "Corpus BLEU, as sacreBLEU reports it.")
      .def_property_readonly("score", [](const BleuResult& r) { return r.s.score; })
      .def_property_readonly("precisions", [](const BleuResult& r) { return r.s.precisions; })
      .def_property_readonly("counts", [](const BleuResult& r) { return r.s.counts; })
      .def_property_readonly("totals", [](const BleuResult& r) { return r.s.totals; })
      .def_property_readonly("bp", [](const BleuResult& r) { return r.s.bp; })
      .def_property_readonly("ratio", [](const BleuResult& r) { return r.s.ratio; })
      .def_property_readonly("sys_len", [](const BleuResult& r) { return r.s.hyp_len; })
      .def_property_readonly("ref_len", [](const BleuResult& r) { return r.s.ref_len; })
      .def_readonly("signature", &BleuResult::signature)
      .def(
          "format", [](const BleuResult& r, int width) { return r.s.format(width); },
          py::arg("width") = 2)
      .def("__str__", [](const BleuResult& r) { return r.s.format(); })
      .def("__repr__", [](const BleuResult& r) { return r.s.format(); });

  py::class_<ChrfResult>(m, "CHRFScore", "Corpus chrF, as sacreBLEU reports it.")
      .def_property_readonly("score", [](const ChrfResult& r) { return r.s.score; })
      .def_property_readonly("beta", [](const ChrfResult& r) { return r.s.beta; })
      .def_property_readonly("name", [](const ChrfResult& r) { return r.s.name(); })
      .def_readonly("signature", &ChrfResult::signature)
      .def(
          "format", [](const ChrfResult& r, int width) { return r.s.format(width); },
          py::arg("width") = 2)
      .def("__str__", [](const ChrfResult& r) { return r.s.format(); })
      .def("__repr__", [](const ChrfResult& r) { return r.s.format(); });

  m.def(
      "bleu",
      [](const std::vector<std::string>& hyps, const py::sequence& refs, bool lowercase,
         const std::string& tokenize) {
        const metrics::ScoredText s = segments(hyps, refs);
        metrics::BleuOptions options;
        options.lowercase = lowercase;
        options.tokenizer = metrics::tokenizer_from_name(tokenize);
        const metrics::Bleu bleu(options);
        BleuResult r;
        {
          py::gil_scoped_release release;
          r.s = bleu.corpus_score(s.hyps, s.refs);
        }
        r.signature = bleu.signature(metrics::nrefs_label(s.refs, s.hyps.size()));
        return r;
      },
      py::arg("hypotheses"), py::arg("references"), py::arg("lowercase") = false,
      py::arg("tokenize") = "13a");
  m.def(
      "chrf",
      [](const std::vector<std::string>& hyps, const py::sequence& refs, bool lowercase) {
        const metrics::ScoredText s = segments(hyps, refs);
        metrics::ChrfOptions options;
        options.lowercase = lowercase;
        const metrics::Chrf chrf(options);
        ChrfResult r;
        {
          py::gil_scoped_release release;
          r.s = chrf.corpus_score(s.hyps, s.refs);
        }
        r.signature = chrf.signature(metrics::nrefs_label(s.refs, s.hyps.size()));
        return r;
      },
      py::arg("hypotheses"), py::arg("references"), py::arg("lowercase") = false);
}

}  // namespace transduce::python
