// model.safetensors as a Python user reads it: tests/io/safetensors_to_raw.py parses the file
// with numpy from the format's specification; every tensor it finds must equal the model's, bit
// for bit, with the same names and shapes, and the metadata must hold the model's config.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "io/model_weights.h"
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

void expect_python_reads(const ModelConfig& config, const std::string& dir) {
  Transformer model(config);
  model.init_parameters(7);
  const std::string file = dir + "/model.safetensors";
  io::save_weights(model, file, {{"step", "12"}});
  const testing::CommandResult r =
      testing::run_shell(std::string(TRANSDUCE_NUMPY_PYTHON) + " " + TRANSDUCE_SOURCE_DIR +
                         "/tests/io/safetensors_to_raw.py " + file + " " + dir + "/raw");
  ASSERT_EQ(r.status, 0) << r.out << "\n(a Python with numpy: Debian's python3-numpy)";
  std::ifstream index_file(dir + "/raw/index.json");
  const nlohmann::json index = nlohmann::json::parse(index_file);

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

}  // namespace
}  // namespace transduce
