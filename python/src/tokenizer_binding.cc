// transduce.Tokenizer: the shared SentencePiece vocabulary of a model or `transduce vocab`.
#include <filesystem>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "io/model_dir.h"
#include "text/tokenizer.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

// A vocabulary or model directory holds spm.model; a path to a .model file is taken as is.
std::string spm_path(const std::string& path) {
  if (std::filesystem::is_directory(path))
    return (std::filesystem::path(path) / io::kVocabularyFile);
  return path;
}

}  // namespace

void register_tokenizer(py::module_& m) {
  py::class_<Tokenizer>(m, "Tokenizer",
                        "The shared subword vocabulary (SentencePiece) of a model directory or of "
                        "`transduce vocab`'s output.")
      .def(py::init([](const std::string& path) { return Tokenizer(spm_path(path)); }),
           py::arg("path"),
           "Loads DIR/spm.model of a vocabulary or model directory, or a .model file.")
      .def(
          "encode", [](const Tokenizer& t, const std::string& text) { return t.encode(text); },
          py::arg("text"), "Subword ids of `text`, without BOS/EOS.")
      .def(
          "encode_pieces",
          [](const Tokenizer& t, const std::string& text) {
            std::vector<std::string> pieces;
            for (int32_t id : t.encode(text)) pieces.push_back(t.piece(id));
            return pieces;
          },
          py::arg("text"), "The pieces of `text` as strings.")
      .def("decode", &Tokenizer::decode, py::arg("ids"),
           "Text of `ids`; PAD, BOS and EOS are skipped.")
      .def("piece", &Tokenizer::piece, py::arg("id"), "The piece of one id.")
      .def("piece_id", &Tokenizer::piece_id, py::arg("piece"),
           "The id of a piece, or -1 when the vocabulary does not have it.")
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("path", &Tokenizer::path)
      .def("__len__", &Tokenizer::vocab_size)
      .def("__repr__", [](const Tokenizer& t) {
        return "transduce.Tokenizer('" + t.path() +
               "', vocab_size=" + std::to_string(t.vocab_size()) + ")";
      });
}

}  // namespace transduce::python
