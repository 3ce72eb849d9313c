// The parts of the Python module _transduce, each registered by its own file.
#pragma once

#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace transduce::python {

void register_errors(pybind11::module_& m);      // errors.cc
void register_tokenizer(pybind11::module_& m);   // tokenizer_binding.cc
void register_translator(pybind11::module_& m);  // translator_binding.cc
void register_metrics(pybind11::module_& m);     // metrics_binding.cc
void register_weights(pybind11::module_& m);     // weights_binding.cc
void register_train(pybind11::module_& m);       // train_binding.cc
void register_parser(pybind11::module_& m);      // parser_binding.cc

// Each of `warnings` (collected while the GIL was released) as a Python UserWarning (errors.cc).
void warn_python(const std::vector<std::string>& warnings);

}  // namespace transduce::python
