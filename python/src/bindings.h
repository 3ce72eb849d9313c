// The parts of the Python module _transduce, each registered by its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace transduce::python {

void register_errors(pybind11::module_& m);      // errors.cc
void register_tokenizer(pybind11::module_& m);   // tokenizer_binding.cc
void register_translator(pybind11::module_& m);  // translator_binding.cc
void register_metrics(pybind11::module_& m);     // metrics_binding.cc
void register_weights(pybind11::module_& m);     // weights_binding.cc
void register_train(pybind11::module_& m);       // train_binding.cc
void register_parser(pybind11::module_& m);      // parser_binding.cc

}  // namespace transduce::python
