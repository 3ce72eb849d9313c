// `transduce average`: the element-wise mean of the last k checkpoints' weights (section 6.1: the
// last 5 for base models, the last 20 for big ones), written as a model directory of its own.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"
#include "train/checkpoint.h"
#include "train/checkpoint_average.h"

namespace transduce::cli {
namespace {

namespace fs = std::filesystem;

struct AverageFlags {
  std::string model_dir;
  std::string out_dir;
  int last = 0;
  std::vector<std::string> checkpoints;
};

// Where config.json, spm.model (and a parser's parse.json) come from: MODEL_DIR, or the model dir
// holding the first named checkpoint (MODEL_DIR/checkpoints/step-N).
std::optional<fs::path> source_model_dir(const AverageFlags& f) {
  if (!f.model_dir.empty()) return fs::path(f.model_dir);
  fs::path checkpoint = fs::absolute(fs::path(f.checkpoints.front())).lexically_normal();
  if (!checkpoint.has_filename()) checkpoint = checkpoint.parent_path();  // a trailing slash
  const fs::path ckpts = checkpoint.parent_path();
  if (ckpts.filename() == "checkpoints") return ckpts.parent_path();
  return std::nullopt;
}

void run_average(const AverageFlags& f) {
  if (f.out_dir.empty()) fail("--output is required");
  std::vector<std::string> chosen;
  if (!f.checkpoints.empty()) {
    chosen = f.checkpoints;
  } else {
    if (f.model_dir.empty()) fail("give -m MODEL_DIR with --last K, or name --checkpoints");
    if (f.last < 1) fail("--last must be at least 1, got {}", f.last);
    std::error_code ec;
    if (!fs::is_directory(f.model_dir, ec)) fail("{}: not a model directory", f.model_dir);
    const std::vector<std::string> all = list_checkpoints(f.model_dir);
    if (all.empty()) fail("{}: no complete checkpoints to average", f.model_dir);
    const size_t k = static_cast<size_t>(f.last);
    if (all.size() < k)
      fmt::print(stderr,
                 "transduce: warning: asked for the last {} checkpoints but {} has only {}; "
                 "averaging those\n",
                 k, f.model_dir, all.size());
    chosen.assign(all.end() - static_cast<std::ptrdiff_t>(std::min(k, all.size())), all.end());
  }

  const fs::path out(f.out_dir);
  const std::optional<fs::path> source = source_model_dir(f);
  std::error_code ec;
  if (source && fs::exists(out, ec) && fs::equivalent(out, *source, ec))
    fail("--output {} is the model directory itself: give another directory", f.out_dir);
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out)) fail("{}: cannot create the directory", f.out_dir);

  const std::string weights = (out / io::kWeightsFile).string();
  average_checkpoints(chosen, weights);

  // The averaged weights with the config and vocabulary make a model directory of their own.
  const fs::path config_src = source ? *source / io::kConfigFile : fs::path();
  if (source && fs::is_regular_file(config_src, ec)) {
    io::copy_file_atomically(config_src.string(), (out / io::kConfigFile).string());
  } else {
    const std::string avg = weights;
    io::write_model_config(f.out_dir, io::config_from_metadata(io::load_safetensors(avg), avg));
  }
  bool copied_vocab = false;
  if (source && fs::is_regular_file(*source / io::kVocabularyFile, ec)) {
    io::copy_file_atomically((*source / io::kVocabularyFile).string(),
                             (out / io::kVocabularyFile).string());
    copied_vocab = true;
  }
  // A parser's linearisation and decoding defaults go with it.
  if (source && fs::is_regular_file(*source / io::kParseSettingsFile, ec))
    io::copy_file_atomically((*source / io::kParseSettingsFile).string(),
                             (out / io::kParseSettingsFile).string());

  fmt::print("averaged {} checkpoint{} into {}:\n", chosen.size(), chosen.size() == 1 ? "" : "s",
             weights);
  for (const std::string& c : chosen) fmt::print("  {}\n", c);
  if (!copied_vocab)
    fmt::print(stderr, "transduce: warning: no spm.model to copy; {} has no vocabulary\n",
               f.out_dir);
}

}  // namespace

void register_average(CLI::App& app) {
  auto flags = std::make_shared<AverageFlags>();
  CLI::App* cmd = app.add_subcommand(
      "average", "average the weights of a model's last checkpoints into a new model directory");
  cmd->add_option("-m,--model", flags->model_dir,
                  "the model directory whose newest checkpoints --last averages");
  CLI::Option* last =
      cmd->add_option("--last", flags->last, "how many of the newest checkpoints to average")
          ->check(CLI::PositiveNumber);
  CLI::Option* named =
      cmd->add_option("--checkpoints", flags->checkpoints, "checkpoint directories to average");
  last->excludes(named);
  cmd->add_option("-o,--output", flags->out_dir, "the directory to write the averaged model to")
      ->required();
  cmd->callback([flags] { run_average(*flags); });
}

}  // namespace transduce::cli
