#include "train/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/directory.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using io::kConfigFile;
using io::kTempMarker;
using io::kWeightsFile;

constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kStateFile = "state.json";
constexpr const char* kEmaFile = "ema.safetensors";

std::function<void(const char*)>& fault_hook() {
  static std::function<void(const char*)> hook;
  return hook;
}

std::string join(const fs::path& dir, const std::string& name) {
  return (dir / name).string();
}

std::string step_name(int64_t step) {
  return fmt::format("step-{:08d}", step);
}

// The step of a checkpoint dir's name "step-" + at least 8 digits, or -1.
int64_t parse_step_name(const std::string& name) {
  constexpr std::string_view prefix = "step-";
  if (name.size() < prefix.size() + 8 || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  if (!std::all_of(begin, end, [](char c) { return c >= '0' && c <= '9'; })) return -1;
  int64_t step = -1;
  auto [ptr, ec] = std::from_chars(begin, end, step);
  if (ec != std::errc() || ptr != end) return -1;
  return step;
}

bool regular_file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_complete(const fs::path& dir) {
  return regular_file_exists(dir / kWeightsFile) && regular_file_exists(dir / kOptimizerFile) &&
         regular_file_exists(dir / kStateFile);
}

// Removes what a killed save leaves behind: temporary checkpoint dirs (step-*.tmp-*) and the
// temporary files of atomic writes in the model dir. Failures are warnings: they cost disk space,
// not correctness.
void remove_leftovers(const fs::path& model_dir, const fs::path& ckpt_dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(ckpt_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) != 0 || name.find(kTempMarker) == std::string::npos) continue;
    std::error_code rec;
    fs::remove_all(e.path(), rec);
    if (rec)
      spdlog::warn("{}: cannot remove a leftover temporary dir: {}", e.path().string(),
                   rec.message());
  }
  for (const fs::directory_entry& e : fs::directory_iterator(model_dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool tmp = name.rfind(std::string(kWeightsFile) + ".tmp.", 0) == 0 ||
                     name.rfind(std::string(kConfigFile) + ".tmp.", 0) == 0;
    if (!tmp || !e.is_regular_file(ec)) continue;
    std::error_code rec;
    fs::remove(e.path(), rec);
    if (rec)
      spdlog::warn("{}: cannot remove a leftover temporary file: {}", e.path().string(),
                   rec.message());
  }
}

// The moving average under the weights' names, with the config, so that the file also loads as
// weights.
void save_ema(const Transformer& model, const std::vector<Tensor>& ema, const std::string& path,
              int64_t step) {
  const ParamList& params = model.parameters();
  TD_CHECK(ema.size() == params.size(), "{} averaged tensors for {} parameters", ema.size(),
           params.size());
  std::map<std::string, Tensor> tensors;
  for (size_t i = 0; i < params.size(); ++i) tensors.emplace(params[i]->name, ema[i]);
  io::save_safetensors(
      path, tensors,
      {{"config", nlohmann::json(model.config()).dump()}, {"step", std::to_string(step)}});
}

std::map<std::string, Tensor> optimizer_tensors(const Adam& adam) {
  std::map<std::string, Tensor> tensors;
  const ParamList& params = adam.parameters();
  const std::vector<Tensor>& m = adam.first_moments();
  const std::vector<Tensor>& v = adam.second_moments();
  TD_CHECK(m.size() == params.size() && v.size() == params.size(),
           "Adam has {} parameters but {} and {} moments", params.size(), m.size(), v.size());
  for (size_t i = 0; i < params.size(); ++i) {
    tensors.emplace("m." + params[i]->name, m[i]);
    tensors.emplace("v." + params[i]->name, v[i]);
  }
  return tensors;
}

// A checkpoint's three files, read and checked against one another (not yet against a model).
struct CheckpointFiles {
  std::string weights_path, optimizer_path, state_path;
  io::SafetensorsFile weights, optimizer;
  ModelConfig config;
  nlohmann::json state;
  int64_t step = 0;
  int64_t adam_steps = 0;
};

int64_t parse_int_metadata(const io::SafetensorsFile& f, const std::string& path,
                           const std::string& key, int64_t fallback) {
  auto it = f.metadata.find(key);
  if (it == f.metadata.end()) return fallback;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0)
    fail("{}: metadata '{}' should be a non-negative integer, not '{}'", path, key, s);
  return v;
}

CheckpointFiles read_checkpoint_files(const std::string& checkpoint_dir) {
  const fs::path dir(checkpoint_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("{}: not a checkpoint directory", checkpoint_dir);
  CheckpointFiles c;
  c.weights_path = join(dir, kWeightsFile);
  c.optimizer_path = join(dir, kOptimizerFile);
  c.state_path = join(dir, kStateFile);
  for (const std::string* p : {&c.weights_path, &c.optimizer_path, &c.state_path})
    if (!regular_file_exists(*p)) fail("{}: missing: the checkpoint is incomplete", *p);

  c.weights = io::load_safetensors(c.weights_path);
  c.config = io::config_from_metadata(c.weights, c.weights_path);
  const io::TensorShapes weights = io::shapes_of(c.weights.tensors);
  io::expect_tensors(c.weights.tensors, weights, c.weights_path);
  c.optimizer = io::load_safetensors(c.optimizer_path);
  io::expect_tensors(c.optimizer.tensors, weights, c.optimizer_path, {"m.", "v."});

  c.state = read_checkpoint_state(checkpoint_dir);
  c.step = c.state.at("step").get<int64_t>();
  c.adam_steps = parse_int_metadata(c.optimizer, c.optimizer_path, "steps", c.step);
  return c;
}

}  // namespace

nlohmann::json read_checkpoint_state(const std::string& checkpoint_dir) {
  const std::string path = join(checkpoint_dir, kStateFile);
  nlohmann::json state =
      nlohmann::json::parse(io::read_whole_file(path, "the training state"), nullptr, false);
  if (state.is_discarded() || !state.is_object())
    fail("{}: the training state is not a JSON object (the file is corrupt?)", path);
  const auto step = state.find("step");
  if (step == state.end() || !step->is_number_integer() || step->get<int64_t>() < 0)
    fail("{}: no non-negative integer \"step\" in the training state", path);
  return state;
}

void set_checkpoint_fault_hook(std::function<void(const char* point)> hook) {
  fault_hook() = std::move(hook);
}

void reach_fault_point(const char* point) {
  if (fault_hook()) fault_hook()(point);
}

void save_checkpoint(const std::string& model_dir, const Transformer& model, const Adam& adam,
                     int64_t step, const nlohmann::json& trainer_state, int keep,
                     const std::vector<Tensor>* ema) {
  if (step < 0) fail("{}: cannot save a checkpoint of negative step {}", model_dir, step);
  if (!trainer_state.is_object() && !trainer_state.is_null())
    fail("{}: the trainer state to save must be a JSON object, not {}", model_dir,
         trainer_state.type_name());
  const fs::path root(model_dir);
  const fs::path ckpt_dir = root / "checkpoints";
  std::error_code ec;
  const bool had_ckpt_dir = fs::is_directory(ckpt_dir, ec);
  io::make_directory(ckpt_dir);
  if (!had_ckpt_dir) {
    io::sync_directory(root);
    io::sync_directory(fs::absolute(root).parent_path());
  }
  remove_leftovers(root, ckpt_dir);

  const std::string name = step_name(step);
  const fs::path final_dir = ckpt_dir / name;
  const fs::path tmp = ckpt_dir / fmt::format("{}{}{}", name, kTempMarker, ::getpid());
  try {
    if (::mkdir(tmp.c_str(), 0777) != 0) {
      const int e = errno;
      fail("{}: cannot create the temporary checkpoint dir: {}", tmp.string(),
           std::error_code(e, std::generic_category()).message());
    }
    // Each write is atomic and synced, directory included (io/atomic_file.h).
    io::save_weights(model, join(tmp, kWeightsFile), {{"step", std::to_string(step)}});
    reach_fault_point("after-weights");
    io::save_safetensors(join(tmp, kOptimizerFile), optimizer_tensors(adam),
                         {{"steps", std::to_string(adam.steps())}});
    reach_fault_point("after-optimizer");
    if (ema) save_ema(model, *ema, join(tmp, kEmaFile), step);
    nlohmann::json state = trainer_state.is_null() ? nlohmann::json::object() : trainer_state;
    state["step"] = step;
    io::write_file_atomically(join(tmp, kStateFile), state.dump(2) + "\n");
    reach_fault_point("after-state");
    io::sync_directory(tmp);
    reach_fault_point("before-rename");
    io::install_directory(tmp, final_dir);
    io::sync_directory(ckpt_dir);
  } catch (...) {
    fs::remove_all(tmp, ec);  // best effort; the next save removes it otherwise
    throw;
  }
  reach_fault_point("after-rename");

  io::save_weights(model, join(root, kWeightsFile), {{"step", std::to_string(step)}});
  reach_fault_point("after-latest");

  if (keep > 0) {
    std::vector<std::string> others;
    for (const std::string& c : list_checkpoints(model_dir))
      if (fs::path(c).filename() != name) others.push_back(c);
    const size_t excess = others.size() + 1 > static_cast<size_t>(keep)
                              ? others.size() + 1 - static_cast<size_t>(keep)
                              : 0;
    for (size_t i = 0; i < excess && i < others.size(); ++i) io::delete_directory(others[i]);
    if (excess > 0) {
      try {
        io::sync_directory(ckpt_dir);
      } catch (const Error& e) {
        spdlog::warn("{}", e.what());
      }
    }
  }
}

bool load_checkpoint_ema(const std::string& checkpoint_dir, const Transformer& model,
                         std::vector<Tensor>& ema) {
  const std::string path = join(checkpoint_dir, kEmaFile);
  if (!regular_file_exists(path)) return false;
  const io::SafetensorsFile f = io::load_safetensors(path);
  const ParamList& params = model.parameters();
  io::expect_tensors(f.tensors, io::shapes_of(params), path);
  std::vector<Tensor> loaded;
  for (const Param* p : params) loaded.push_back(f.tensors.at(p->name).clone());
  ema = std::move(loaded);
  return true;
}

std::string checkpoint_dir(const std::string& model_dir, int64_t step) {
  return (fs::path(model_dir) / "checkpoints" / step_name(step)).string();
}

std::vector<std::string> list_checkpoints(const std::string& model_dir) {
  const fs::path ckpt_dir = fs::path(model_dir) / "checkpoints";
  std::error_code ec;
  if (!fs::is_directory(ckpt_dir, ec)) return {};
  std::vector<std::pair<int64_t, std::string>> found;
  for (const fs::directory_entry& e : fs::directory_iterator(ckpt_dir, ec)) {
    const std::string name = e.path().filename().string();
    const int64_t step = parse_step_name(name);
    if (step < 0) continue;
    std::error_code dec;
    if (!e.is_directory(dec) || !is_complete(e.path())) continue;
    found.emplace_back(step, e.path().string());
  }
  if (ec) fail("{}: cannot list the checkpoints: {}", ckpt_dir.string(), ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  out.reserve(found.size());
  for (auto& [step, path] : found) out.push_back(std::move(path));
  return out;
}

nlohmann::json load_checkpoint(const std::string& checkpoint_dir, Transformer& model, Adam& adam) {
  CheckpointFiles c = read_checkpoint_files(checkpoint_dir);

  // Check everything against the model and the optimizer before changing either.
  io::expect_tensors(c.weights.tensors, io::shapes_of(model.parameters()), c.weights_path);
  const ParamList& params = adam.parameters();
  const std::vector<Tensor>& m = adam.first_moments();
  const std::vector<Tensor>& v = adam.second_moments();
  TD_CHECK(m.size() == params.size() && v.size() == params.size(),
           "Adam has {} parameters but {} and {} moments", params.size(), m.size(), v.size());
  io::expect_tensors(c.optimizer.tensors, io::shapes_of(params), c.optimizer_path, {"m.", "v."},
                     /*exact=*/false);

  io::load_weights(model, c.weights, c.weights_path);
  for (size_t i = 0; i < params.size(); ++i) {
    m[i].copy_from(c.optimizer.tensors.at("m." + params[i]->name));
    v[i].copy_from(c.optimizer.tensors.at("v." + params[i]->name));
  }
  adam.set_steps(c.adam_steps);
  return std::move(c.state);
}

std::optional<std::string> latest_checkpoint(const std::string& model_dir) {
  std::vector<std::string> all = list_checkpoints(model_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      read_checkpoint_files(*it);
      return *it;
    } catch (const Error& e) {
      spdlog::warn("skipping checkpoint {}: {}", *it, e.what());
    }
  }
  return std::nullopt;
}

}  // namespace transduce
