// The search options as Python keyword arguments, derived from their one declaration
// (decode/search_options.h): translate(texts, beam=8, alpha=1.0) reads beam and alpha through
// the same list as `transduce translate --beam 8 --alpha 1.0` and the service's request fields.
#pragma once

#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "decode/search.h"

namespace transduce::python {

// A Python value (None, bool, int, float, str, or a list of them) as JSON.
nlohmann::json json_of(const pybind11::handle& value);

// The keyword arguments as search option overrides ({"beam": 8}): each must be one of `keys`
// (a TypeError naming `function` otherwise, as Python's own); None leaves an option out.
nlohmann::json search_overrides(const pybind11::kwargs& kwargs,
                                const std::vector<std::string>& keys, const char* function);

// `options` with the keyword arguments written over them; a value of the wrong kind or out of
// range is a transduce.Error naming the option.
SearchOptions with_search_kwargs(SearchOptions options, const pybind11::kwargs& kwargs,
                                 const std::vector<std::string>& keys, const char* function);

// "beam=4: beam size (1: greedy)\n..." for the docstrings: the options of `keys` with their
// defaults in `defaults`.
std::string search_kwargs_doc(const std::vector<std::string>& keys, const SearchOptions& defaults);

// transduce.search_options(): every search option as {"key", "kind", "default", "help"}.
void register_search_options(pybind11::module_& m);

}  // namespace transduce::python
