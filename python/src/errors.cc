// transduce::Error becomes transduce.Error (a RuntimeError) carrying the one-line message the
// command line prints; the library's warnings become Python's.
#include "bindings.h"

#include "core/error.h"

namespace transduce::python {

void register_errors(pybind11::module_& m) {
  pybind11::register_exception<Error>(m, "Error", PyExc_RuntimeError);
}

void warn_python(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings)
    if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1) != 0) throw pybind11::error_already_set();
}

}  // namespace transduce::python
