// transduce.load_weights: a model's parameters as numpy arrays, read by transduce's own
// safetensors reader.
#include <cstring>
#include <filesystem>
#include <string>

#include <pybind11/numpy.h>

#include "bindings.h"
#include "core/bf16.h"
#include "core/error.h"
#include "io/model_dir.h"
#include "io/safetensors.h"

namespace py = pybind11;

namespace transduce::python {

namespace {

template <typename T>
py::array copy_as(const Tensor& t) {
  std::vector<py::ssize_t> shape;
  for (int i = 0; i < t.ndim(); ++i) shape.push_back(t.dim(i));
  py::array_t<T> out(shape);
  std::memcpy(out.mutable_data(), t.raw(), t.nbytes());
  return out;
}

// bfloat16 has no numpy type: float32 holds each value exactly.
py::array bf16_as_f32(const Tensor& t) {
  std::vector<py::ssize_t> shape;
  for (int i = 0; i < t.ndim(); ++i) shape.push_back(t.dim(i));
  py::array_t<float> out(shape);
  float* dst = out.mutable_data();
  const uint16_t* src = t.bf16();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = bf16_to_float(src[i]);
  return out;
}

py::array to_numpy(const Tensor& t) {
  switch (t.dtype()) {
    case DType::F32:
      return copy_as<float>(t);
    case DType::BF16:
      return bf16_as_f32(t);
    case DType::F16: {
      py::array a = copy_as<uint16_t>(t);
      return a.view("float16");
    }
    case DType::I32:
      return copy_as<int32_t>(t);
    case DType::I64:
      return copy_as<int64_t>(t);
    case DType::U8:
      return copy_as<uint8_t>(t);
    case DType::I8:
      return copy_as<int8_t>(t);
  }
  fail("a tensor of an unknown dtype");
}

}  // namespace

void register_weights(py::module_& m) {
  m.def(
      "load_weights",
      [](const std::string& path) {
        const std::string file =
            std::filesystem::is_directory(path) ? io::model_file(path, io::kWeightsFile) : path;
        io::SafetensorsFile st;
        {
          py::gil_scoped_release release;
          st = io::load_safetensors(file);
        }
        py::dict out;
        for (const auto& [name, tensor] : st.tensors) out[py::str(name)] = to_numpy(tensor);
        return out;
      },
      py::arg("path"),
      "The tensors of a model directory's model.safetensors (or of a .safetensors file) as numpy "
      "arrays by name; bf16 ones as float32.");
}

}  // namespace transduce::python
