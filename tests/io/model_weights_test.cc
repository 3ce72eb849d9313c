// A model's weights through safetensors and back, and the refusals when they do not fit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "io/model_weights.h"
#include "support/random_model.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

ModelConfig small() {
  ModelConfig c = ModelConfig::preset("tiny");
  c.layers = 1;
  c.d_model = 16;
  c.d_ff = 24;
  c.heads = 2;
  c.d_k = 3;
  c.d_v = 5;
  c.vocab_size = 20;
  c.positions = Positions::Learned;
  c.max_positions = 10;
  return c;
}

class ModelWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("transduce_weights_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_F(ModelWeights, RoundTripKeepsEveryValueAndTheConfig) {
  Transformer a(small());
  // Not init_parameters alone: its zero biases and unit gains are what a freshly made model
  // holds, so a loader that skipped them would pass.
  testing::init_untrained(a, 11);
  io::save_weights(a, path("a.safetensors"));
  io::SafetensorsFile f = io::load_safetensors(path("a.safetensors"));
  ModelConfig c = io::config_from_metadata(f, path("a.safetensors"));
  EXPECT_EQ(c.d_k, 3);
  EXPECT_EQ(c.d_v, 5);
  EXPECT_EQ(c.positions, Positions::Learned);
  Transformer b(c);
  io::load_weights(b, f, path("a.safetensors"));
  ASSERT_EQ(a.parameters().size(), b.parameters().size());
  for (size_t i = 0; i < a.parameters().size(); ++i) {
    const Tensor &x = a.parameters()[i]->value, &y = b.parameters()[i]->value;
    ASSERT_EQ(x.shape(), y.shape());
    EXPECT_EQ(0, std::memcmp(x.raw(), y.raw(), x.nbytes())) << a.parameters()[i]->name;
  }
  io::save_weights(b, path("b.safetensors"));
  EXPECT_EQ(read_bytes(path("a.safetensors")), read_bytes(path("b.safetensors")));
}

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST_F(ModelWeights, RefusesMissingExtraAndMisshapenTensors) {
  Transformer a(small());
  a.init_parameters(1);
  io::save_weights(a, path("a.safetensors"));
  io::SafetensorsFile f = io::load_safetensors(path("a.safetensors"));
  Transformer b(small());

  io::SafetensorsFile missing = f;
  missing.tensors.erase("decoder.layers.0.cross_attn.v_proj.weight");
  expect_error([&] { io::load_weights(b, missing, "m.safetensors"); },
               "decoder.layers.0.cross_attn.v_proj.weight");

  io::SafetensorsFile extra = f;
  extra.tensors.emplace("stray.weight", Tensor::zeros({2}));
  expect_error([&] { io::load_weights(b, extra, "e.safetensors"); }, "stray.weight");
  EXPECT_NO_THROW(io::load_weights(b, extra, "e.safetensors", /*strict=*/false));

  io::SafetensorsFile wrong = f;
  wrong.tensors["embedding.weight"] = Tensor::zeros({21, 16});
  expect_error([&] { io::load_weights(b, wrong, "w.safetensors"); }, "[21, 16]");

  io::SafetensorsFile no_config = f;
  no_config.metadata.clear();
  expect_error([&] { io::config_from_metadata(no_config, "n.safetensors"); }, "n.safetensors");
}

}  // namespace
}  // namespace transduce
