// `transduce quantize`: a model directory whose product weights are stored in int8 (one scale
// per output row) or bf16, for translation (docs/model_dir.md, "Quantized models").
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "core/error.h"
#include "decode/loaded_model.h"
#include "io/atomic_file.h"
#include "io/model_dir.h"
#include "io/model_weights.h"

namespace transduce::cli {
namespace {

namespace fs = std::filesystem;

struct QuantizeFlags {
  std::string model_dir, out_dir, type = "int8";
};

void run_quantize(const QuantizeFlags& f) {
  const Precision type = parse_compute_type(f.type);
  const fs::path out(f.out_dir);
  std::error_code ec;
  if (fs::exists(out, ec) && fs::equivalent(out, f.model_dir, ec))
    fail("--output {} is the model directory itself: give another directory", f.out_dir);
  // Read in fp32 and quantized without packing for int8's products: any CPU can.
  LoadedModel loaded(f.model_dir, Precision::FP32);
  if (type == Precision::INT8) loaded.model().quantize_int8();
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out)) fail("{}: cannot create the directory", f.out_dir);

  std::map<std::string, std::string> metadata;
  if (loaded.step() >= 0) metadata["step"] = std::to_string(loaded.step());
  const std::string weights = (out / io::kWeightsFile).string();
  const int converted = io::save_quantized(loaded.model(), weights, type, metadata);
  const fs::path source(f.model_dir);
  for (const char* name : {io::kConfigFile, io::kVocabularyFile, io::kParseSettingsFile})
    if (fs::is_regular_file(source / name, ec))
      io::copy_file_atomically((source / name).string(), (out / name).string());

  fmt::print("{}: {} weight matrices in {} ({:.1f} MB), the rest fp32\n", weights, converted,
             precision_name(type), static_cast<double>(fs::file_size(weights)) / 1e6);
}

}  // namespace

void register_quantize(CLI::App& app) {
  auto f = std::make_shared<QuantizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "write a model directory whose matrix-product weights are int8 (or bf16)");
  cmd->add_option("-m,--model", f->model_dir, "model directory")->required();
  cmd->add_option("-o,--output", f->out_dir, "the directory to write the quantized model to")
      ->required();
  cmd->add_option("--compute-type", f->type,
                  "int8: one scale per output row (the linear layers and the shared embedding) "
                  "| bf16 (the linear layers' weights)")
      ->check(CLI::IsMember({"int8", "bf16"}))
      ->capture_default_str();
  cmd->callback([f] { run_quantize(*f); });
}

}  // namespace transduce::cli
