// transduce::Error becomes transduce.Error (a RuntimeError) carrying the one-line message the
// command line prints.
#include "bindings.h"

#include "core/error.h"

namespace transduce::python {

void register_errors(pybind11::module_& m) {
  pybind11::register_exception<Error>(m, "Error", PyExc_RuntimeError);
}

}  // namespace transduce::python
