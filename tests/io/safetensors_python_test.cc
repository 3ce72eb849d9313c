// model.safetensors as a Python user reads it: tests/io/safetensors_to_raw.py parses the file
// with numpy from the format's specification; every tensor it finds must equal the model's, bit
// for bit, with the same names and shapes, and the metadata must hold the model's config; a
// quantized model's int8 and bf16 weights likewise.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/bf16.h"
#include "io/model_weights.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "support/random_model.h"
#include "support/run_command.h"
#include "support/toy_corpus.h"

namespace transduce {
namespace {

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What tests/io/safetensors_to_raw.py found in `file`: its index.json.
nlohmann::json read_from_python(const std::string& file, const std::string& dir) {
  const testing::CommandResult r =
      testing::run_shell(std::string(TRANSDUCE_NUMPY_PYTHON) + " " + TRANSDUCE_SOURCE_DIR +
                         "/tests/io/safetensors_to_raw.py " + file + " " + dir + "/raw");
  EXPECT_EQ(r.status, 0) << r.out << "\n(a Python with numpy: Debian's python3-numpy)";
  std::ifstream index_file(dir + "/raw/index.json");
  return nlohmann::json::parse(index_file);
}

void expect_python_reads(const ModelConfig& config, const std::string& dir) {
  Transformer model(config);
  model.init_parameters(7);
  const std::string file = dir + "/model.safetensors";
  io::save_weights(model, file, {{"step", "12"}});
  const nlohmann::json index = read_from_python(file, dir);

  EXPECT_EQ(index["metadata"]["step"], "12");
  EXPECT_EQ(nlohmann::json::parse(index["metadata"]["config"].get<std::string>()),
            nlohmann::json(config));
  std::map<std::string, const Param*> params;
  for (const Param* p : model.parameters()) params[p->name] = p;
  ASSERT_EQ(index["tensors"].size(), params.size());
  for (const nlohmann::json& t : index["tensors"]) {
    const std::string name = t["name"];
    SCOPED_TRACE(name);
    ASSERT_TRUE(params.count(name));
    const Tensor& value = params[name]->value;
    EXPECT_EQ(t["dtype"], "F32");
    EXPECT_EQ(t["shape"].get<std::vector<int64_t>>(),
              std::vector<int64_t>(value.shape().begin(), value.shape().end()));
    const std::vector<char> bytes = read_bytes(dir + "/raw/" + t["file"].get<std::string>());
    ASSERT_EQ(bytes.size(), value.nbytes());
    EXPECT_EQ(std::memcmp(bytes.data(), value.f32(), bytes.size()), 0);
  }
}

TEST(SafetensorsFromPython, EveryTensorEqualsTheModels) {
  testing::TempDir dir("transduce_safetensors_python");
  // A realistic size (a 4-layer d_model 128 model, 2.4M parameters) and a shape variant.
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 4;
  c.d_model = 128;
  c.d_ff = 512;
  c.heads = 4;
  c.d_k = c.d_v = 32;
  c.vocab_size = 4000;
  expect_python_reads(c, dir.path());
  ModelConfig odd = testing::small_random_config(101);
  odd.d_k = 3;
  odd.d_v = 5;
  odd.norm = NormPlacement::Pre;
  odd.positions = Positions::Learned;
  std::filesystem::create_directories(dir.path() + "/odd");
  expect_python_reads(odd, dir.path() + "/odd");
}

// A `transduce quantize` file read from Python: each product weight is I8 (or BF16) whose values,
// times its row's scale for int8, are what the model computes with (Param::int8's integers and
// scales; the fp32 weight rounded to bf16).
TEST(SafetensorsFromPython, QuantizedWeightsAreWhatTheModelComputesWith) {
  testing::TempDir dir("transduce_safetensors_python_quantized");
  const ModelConfig c = testing::small_random_config(101);
  for (const Precision type : {Precision::INT8, Precision::BF16}) {
    SCOPED_TRACE(precision_name(type));
    Transformer model(c);
    model.init_parameters(9);
    Transformer original(c);
    original.init_parameters(9);
    if (type == Precision::INT8) model.quantize_int8();
    const std::string sub = dir.path() + "/" + std::string(precision_name(type));
    std::filesystem::create_directories(sub);
    io::save_quantized(model, sub + "/model.safetensors", type, {});
    const nlohmann::json index = read_from_python(sub + "/model.safetensors", sub);
    EXPECT_EQ(index["metadata"]["quantization"], std::string(precision_name(type)));
    std::map<std::string, std::vector<float>> found;
    std::map<std::string, std::string> dtype;
    for (const nlohmann::json& t : index["tensors"]) {
      const std::vector<char> bytes = read_bytes(sub + "/raw/" + t["file"].get<std::string>());
      std::vector<float> v(bytes.size() / sizeof(float));
      std::memcpy(v.data(), bytes.data(), bytes.size());
      found[t["name"]] = v;
      dtype[t["name"]] = t["dtype"];
    }
    int reduced = 0;
    for (const Param* p : model.parameters()) {
      SCOPED_TRACE(p->name);
      ASSERT_TRUE(found.count(p->name));
      const std::vector<float>& got = found[p->name];
      if (type == Precision::INT8 && p->gemm_weight) {
        ++reduced;
        EXPECT_EQ(dtype[p->name], "I8");
        const Tensor& q = p->int8.q;
        EXPECT_EQ(got, std::vector<float>(q.i8(), q.i8() + q.numel()));
        const Tensor& s = p->int8.scales;
        EXPECT_EQ(found[p->name + "_scale"], std::vector<float>(s.f32(), s.f32() + s.numel()));
      } else if (type == Precision::BF16 && p->gemm_weight && p != &model.embedding.weight) {
        ++reduced;
        EXPECT_EQ(dtype[p->name], "BF16");
        const Tensor& w = original.find(p->name)->value;
        std::vector<float> want(static_cast<size_t>(w.numel()));
        for (int64_t i = 0; i < w.numel(); ++i) want[i] = round_to_bf16(w.f32()[i]);
        EXPECT_EQ(got, want);
      } else {
        EXPECT_EQ(dtype[p->name], "F32");
        EXPECT_EQ(got, std::vector<float>(p->value.f32(), p->value.f32() + p->value.numel()));
      }
    }
    EXPECT_GT(reduced, 10);
  }
}

}  // namespace
}  // namespace transduce
