// `transduce quantize` and the model directory it writes: the integers and scales read back are
// the quantization of the source weights; the quantized directory translates exactly as the fp32
// one does with --compute-type int8 (or bf16); quantizing needs no int8 instructions; and files
// that declare int8 wrongly are refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "ops/ops.h"
#include "support/random_model.h"
#include "support/run_command.h"

namespace transduce {
namespace {

using testing::CommandResult;
using testing::expect_one_line_error;
using testing::run_transduce;

class QuantizeCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new testing::RandomModelDir("transduce_quantize_cli"); }
  static void TearDownTestSuite() { delete dir_; }
  static std::string model() { return dir_->model(); }
  static std::string work() { return dir_->path(); }

  // The translations of the toy corpus's first 40 sources by `args` (a model and flags).
  static std::string translate(const std::string& args) {
    CommandResult r = run_transduce("translate " + args + " --beam 3 < " + work() + "/first40.src",
                                    /*merge_stderr=*/false);
    EXPECT_EQ(r.status, 0) << args;
    return r.out;
  }

  static void SetUpSources() {
    std::ifstream in(work() + "/train.src");
    std::ofstream out(work() + "/first40.src");
    std::string line;
    for (int i = 0; i < 40 && std::getline(in, line); ++i) out << line << "\n";
  }

  static testing::RandomModelDir* dir_;
};

testing::RandomModelDir* QuantizeCommand::dir_ = nullptr;

TEST_F(QuantizeCommand, Int8RoundTripsTheQuantizedIntegersAndTranslatesAsAtLoad) {
  SetUpSources();
  const std::string out = work() + "/int8";
  CommandResult q = run_transduce("quantize -m " + model() + " --output " + out);
  ASSERT_EQ(q.status, 0) << q.out;

  const io::SafetensorsFile source = io::load_safetensors(model() + "/model.safetensors");
  const io::SafetensorsFile quantized = io::load_safetensors(out + "/model.safetensors");
  EXPECT_EQ(quantized.metadata.at("quantization"), "int8");
  int int8_tensors = 0;
  for (const auto& [name, w] : source.tensors) {
    const Tensor& got = quantized.tensors.at(name);
    const bool product_weight = name.size() > 7 && name.substr(name.size() - 7) == ".weight" &&
                                name.find("norm") == std::string::npos;
    if (!product_weight) {  // layer norms and biases: fp32, unchanged
      ASSERT_EQ(got.dtype(), DType::F32) << name;
      EXPECT_EQ(std::vector<float>(got.f32(), got.f32() + got.numel()),
                std::vector<float>(w.f32(), w.f32() + w.numel()))
          << name;
      continue;
    }
    ++int8_tensors;
    ASSERT_EQ(got.dtype(), DType::I8) << name;
    const Tensor& scales = quantized.tensors.at(name + "_scale");
    Tensor want_q = Tensor::empty(w.shape(), DType::I8), want_s = Tensor::empty({w.dim(0)});
    ops::quantize_rows(w, want_q, want_s);
    EXPECT_EQ(std::vector<int8_t>(got.i8(), got.i8() + got.numel()),
              std::vector<int8_t>(want_q.i8(), want_q.i8() + want_q.numel()))
        << name;
    EXPECT_EQ(std::vector<float>(scales.f32(), scales.f32() + scales.numel()),
              std::vector<float>(want_s.f32(), want_s.f32() + want_s.numel()))
        << name;
  }
  // The embedding; attention and feed-forward, 2 layers.
  EXPECT_EQ(int8_tensors, 1 + 2 * 4 + 2 * 8 + 2 * 2 + 2 * 2);
  EXPECT_EQ(quantized.tensors.size(), source.tensors.size() + int8_tensors);  // + the scales

  // The quantized directory translates in int8 by itself, exactly as the fp32 one at load.
  const std::string at_load = translate("-m " + model() + " --compute-type int8");
  EXPECT_EQ(translate("-m " + out), at_load);
  EXPECT_EQ(translate("-m " + out + " --compute-type int8"), at_load);
  EXPECT_NE(at_load, "");
  // It has no fp32 weights left for another type.
  expect_one_line_error(run_transduce("translate -m " + out + " --compute-type fp32 < /dev/null"),
                        "is quantized to int8");
}

TEST_F(QuantizeCommand, Bf16StoresBf16WeightsThatTranslateAsBf16AtLoad) {
  SetUpSources();
  const std::string out = work() + "/bf16";
  CommandResult q =
      run_transduce("quantize -m " + model() + " --output " + out + " --compute-type bf16");
  ASSERT_EQ(q.status, 0) << q.out;
  const io::SafetensorsFile quantized = io::load_safetensors(out + "/model.safetensors");
  EXPECT_EQ(quantized.metadata.at("quantization"), "bf16");
  EXPECT_EQ(quantized.tensors.at("encoder.layers.0.ffn.fc1.weight").dtype(), DType::BF16);
  EXPECT_EQ(quantized.tensors.at("encoder.layers.0.ffn.fc1.bias").dtype(), DType::F32);
  EXPECT_EQ(translate("-m " + out), translate("-m " + model() + " --compute-type bf16"));
}

// Quantizing needs no int8 instructions: where oneDNN is told to use at most AVX2, `quantize`
// writes the same file, byte for byte.
TEST_F(QuantizeCommand, QuantizesWithoutInt8InstructionsToTheSameFile) {
  const std::string here = work() + "/int8-here", avx2 = work() + "/int8-avx2";
  ASSERT_EQ(run_transduce("quantize -m " + model() + " --output " + here).status, 0);
  const std::string limit = "ONEDNN_MAX_CPU_ISA=AVX2 ";
  CommandResult q = testing::run_shell(limit + TRANSDUCE_BINARY + " quantize -m " + model() +
                                       " --output " + avx2);
  ASSERT_EQ(q.status, 0) << q.out;
  auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string want = bytes(here + "/model.safetensors");
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(bytes(avx2 + "/model.safetensors"), want);
  // Translating needs none either: there gemm_int8 makes the same exact int32 sums in a plain
  // loop (ops/cpu/int8_sums.h), so the translations are the same.
  SetUpSources();
  const CommandResult limited = testing::run_shell(
      limit + TRANSDUCE_BINARY + " translate -m " + avx2 + " --beam 3 < " + work() + "/first40.src",
      /*merge_stderr=*/false);
  ASSERT_EQ(limited.status, 0);
  EXPECT_EQ(limited.out, translate("-m " + here));
}

// An int8 directory whose embedding is F32 (the weights quantized except that one) has it
// quantized at load, to the same integers: it translates as the all-int8 directory does.
TEST_F(QuantizeCommand, AnFp32EmbeddingInAnInt8DirectoryIsQuantizedAtLoad) {
  SetUpSources();
  const std::string all = work() + "/int8-all", mixed = work() + "/int8-mixed";
  ASSERT_EQ(run_transduce("quantize -m " + model() + " --output " + all).status, 0);
  ASSERT_EQ(run_transduce("quantize -m " + model() + " --output " + mixed).status, 0);
  io::SafetensorsFile file = io::load_safetensors(mixed + "/model.safetensors");
  file.tensors["embedding.weight"] =
      io::load_safetensors(model() + "/model.safetensors").tensors.at("embedding.weight");
  file.tensors.erase("embedding.weight_scale");
  io::save_safetensors(mixed + "/model.safetensors", file.tensors, file.metadata);
  ASSERT_EQ(
      io::load_safetensors(mixed + "/model.safetensors").tensors.at("embedding.weight").dtype(),
      DType::F32);
  EXPECT_EQ(translate("-m " + mixed), translate("-m " + all));
}

// Files that declare int8 wrongly, each refused in one line naming the tensor.
TEST_F(QuantizeCommand, MisdeclaredInt8TensorsAreRefusedInOneLine) {
  const std::string good = work() + "/int8-good";
  ASSERT_EQ(run_transduce("quantize -m " + model() + " --output " + good).status, 0);
  const io::SafetensorsFile file = io::load_safetensors(good + "/model.safetensors");
  const std::string bad = work() + "/int8-bad";
  ASSERT_EQ(run_transduce("quantize -m " + model() + " --output " + bad).status, 0);
  auto write_and_load = [&](std::map<std::string, Tensor> tensors) {
    io::save_safetensors(bad + "/model.safetensors", tensors, file.metadata);
    return run_transduce("translate -m " + bad + " < /dev/null");
  };
  const std::string w = "decoder.layers.1.ffn.fc2.weight";

  std::map<std::string, Tensor> no_scale = file.tensors;
  no_scale.erase(w + "_scale");
  expect_one_line_error(write_and_load(no_scale), "int8 tensor '" + w + "' has no scales");

  std::map<std::string, Tensor> short_scale = file.tensors;
  short_scale[w + "_scale"] = Tensor::zeros({3});
  expect_one_line_error(write_and_load(short_scale), "'" + w + "_scale' should be F32");

  std::map<std::string, Tensor> int8_norm = file.tensors;
  const std::string norm = "encoder.layers.0.self_attn_norm.weight";
  ASSERT_TRUE(int8_norm.count(norm)) << "no tensor " << norm;
  int8_norm[norm] = Tensor::zeros(int8_norm[norm].shape(), DType::I8);
  expect_one_line_error(write_and_load(int8_norm), "'" + norm + "' is I8, expected F32");

  std::map<std::string, Tensor> stray_scale =
      io::load_safetensors(model() + "/model.safetensors").tensors;
  stray_scale[w + "_scale"] = file.tensors.at(w + "_scale");
  expect_one_line_error(write_and_load(stray_scale), "not a parameter of this model");

  expect_one_line_error(run_transduce("quantize -m " + model() + " --output " + model()),
                        "is the model directory itself");
}

}  // namespace
}  // namespace transduce
