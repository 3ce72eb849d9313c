// The extension module behind `import transduce` (python/transduce/__init__.py re-exports it).
#include "bindings.h"

#include "core/threads.h"

namespace py = pybind11;

PYBIND11_MODULE(_transduce, m) {
  m.doc() = "transduce's C++ library: translation, scoring, parsing, metrics and model files";
  transduce::python::register_errors(m);
  transduce::python::register_tokenizer(m);
  transduce::python::register_translator(m);
  transduce::python::register_metrics(m);
  transduce::python::register_weights(m);
  transduce::python::register_train(m);
  transduce::python::register_parser(m);
  m.def(
      "set_threads", [](int n) { return transduce::set_threads(n); }, py::arg("n"),
      "Threads for BLAS and the kernels of the calling thread (n <= 0: all cores); returns the "
      "number now in use.");
  m.def("num_cores", &transduce::num_cores, "Cores this process may run on.");
}
