#include "search_kwargs.h"

#include <algorithm>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "decode/search_options.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

const char* kind_name(OptionInfo::Kind kind) {
  switch (kind) {
    case OptionInfo::Kind::kInteger:
      return "int";
    case OptionInfo::Kind::kReal:
      return "float";
    case OptionInfo::Kind::kSwitch:
      return "bool";
    case OptionInfo::Kind::kChoices:
      return "list";
    default:
      return "str";
  }
}

}  // namespace

nlohmann::json json_of(const py::handle& value) {
  const std::string text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
  return nlohmann::json::parse(text);
}

nlohmann::json search_overrides(const py::kwargs& kwargs, const std::vector<std::string>& keys,
                                const char* function) {
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [name, value] : kwargs) {
    const std::string key = name.cast<std::string>();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw py::type_error(
          fmt::format("{}() got an unexpected keyword argument '{}'", function, key));
    if (!value.is_none()) overrides[key] = json_of(value);
  }
  return overrides;
}

SearchOptions with_search_kwargs(SearchOptions options, const py::kwargs& kwargs,
                                 const std::vector<std::string>& keys, const char* function) {
  apply_search_options(search_overrides(kwargs, keys, function), options);
  return options;
}

std::string search_kwargs_doc(const std::vector<std::string>& keys, const SearchOptions& defaults) {
  std::string doc;
  for (const SearchOptionSpec& spec : search_option_specs())
    if (std::find(keys.begin(), keys.end(), spec.key) != keys.end())
      doc += fmt::format("\n    {}={}: {}", spec.key, spec.get(defaults).dump(), spec.help);
  return doc;
}

void register_search_options(py::module_& m) {
  m.def(
      "search_options",
      [] {
        py::list out;
        const py::module_ json = py::module_::import("json");
        for (const SearchOptionSpec& spec : search_option_specs()) {
          py::dict d;
          d["key"] = spec.key;
          d["kind"] = kind_name(spec.kind);
          d["default"] = json.attr("loads")(spec.get(SearchOptions{}).dump());
          d["help"] = spec.help;
          out.append(d);
        }
        return out;
      },
      "Every search option (beam, alpha, ...) as {key, kind, default, help}: the keyword "
      "arguments of Translator.translate and Parser.parse, the flags of `transduce translate` and "
      "the fields of the service's requests.");
}

}  // namespace transduce::python
