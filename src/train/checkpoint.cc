#include "train/checkpoint.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/model_weights.h"
#include "io/safetensors.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kStateFile = "state.json";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kEmaFile = "ema.safetensors";
constexpr const char* kTmpMarker = ".tmp-";

std::function<void(const char*)>& fault_hook() {
  static std::function<void(const char*)> hook;
  return hook;
}

void fault_point(const char* point) {
  if (fault_hook()) fault_hook()(point);
}

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

std::string join(const fs::path& dir, const std::string& name) {
  return (dir / name).string();
}

// Makes renames and creations inside `dir` durable. Filesystems that cannot fsync a directory
// (EINVAL, ENOTSUP) are tolerated.
void sync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    fail("{}: cannot open the directory to sync it: {}", dir.string(), errno_message(e));
  }
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (rc != 0 && e != EINVAL && e != ENOTSUP)
    fail("{}: syncing the directory failed: {}", dir.string(), errno_message(e));
}

void rename_or_fail(const fs::path& from, const fs::path& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const int e = errno;
    fail("{}: cannot rename {} to it: {}", to.string(), from.string(), errno_message(e));
  }
}

void make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("{}: cannot create the directory: {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec)) fail("{}: exists but is not a directory", dir.string());
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

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot read {}", path, what);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail("{}: reading {} failed", path, what);
  return s.str();
}

// Removes what a killed save leaves behind: temporary checkpoint dirs (step-*.tmp-*) and the
// temporary files of atomic writes in the model dir. Failures are warnings: they cost disk space,
// not correctness.
void remove_leftovers(const fs::path& model_dir, const fs::path& ckpt_dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(ckpt_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) != 0 || name.find(kTmpMarker) == std::string::npos) continue;
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

// Moves `dir` out of the set of checkpoints with one rename, then deletes it: a crash midway leaves
// a temporary dir for the next save to remove, never a half-deleted checkpoint.
void delete_checkpoint(const fs::path& dir) {
  const fs::path doomed = dir.parent_path() / fmt::format("{}{}{}-delete", dir.filename().string(),
                                                          kTmpMarker, ::getpid());
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  if (ec) {
    spdlog::warn("{}: cannot delete the old checkpoint: {}", dir.string(), ec.message());
    return;
  }
  fs::remove_all(doomed, ec);
  if (ec)
    spdlog::warn("{}: cannot remove the old checkpoint's files: {}", doomed.string(), ec.message());
}

// Puts the complete temporary dir `tmp` in place as `final_dir`, replacing an existing checkpoint
// of the same step atomically (RENAME_EXCHANGE) where the filesystem allows.
void install_dir(const fs::path& tmp, const fs::path& final_dir) {
  if (std::rename(tmp.c_str(), final_dir.c_str()) == 0) return;
  const int e = errno;
  if (e != ENOTEMPTY && e != EEXIST) {
    fail("{}: cannot rename the new directory {} into place: {}", final_dir.string(), tmp.string(),
         errno_message(e));
  }
  // A checkpoint of this step exists already: swap, then the old one sits at the temporary name.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return;
  }
  // No exchange on this filesystem: move the old one aside (to a name the next save cleans up).
  const fs::path old =
      final_dir.parent_path() /
      fmt::format("{}{}{}-replaced", final_dir.filename().string(), kTmpMarker, ::getpid());
  std::error_code ec;
  fs::remove_all(old, ec);
  rename_or_fail(final_dir, old);
  rename_or_fail(tmp, final_dir);
  fs::remove_all(old, ec);
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

void copy_if_present(const fs::path& from_dir, const fs::path& to_dir, const char* name) {
  std::error_code ec;
  if (fs::is_regular_file(from_dir / name, ec))
    io::copy_file_atomically((from_dir / name).string(), (to_dir / name).string());
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

void expect_f32(const Tensor& t, const std::string& path, const std::string& name) {
  if (t.dtype() != DType::F32)
    fail("{}: tensor '{}' is {}, expected F32", path, name, dtype_name(t.dtype()));
}

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
  for (const auto& [name, t] : c.weights.tensors) expect_f32(t, c.weights_path, name);

  c.optimizer = io::load_safetensors(c.optimizer_path);
  std::set<std::string> expected;
  for (const auto& [name, t] : c.weights.tensors) {
    for (const char* prefix : {"m.", "v."}) {
      const std::string key = prefix + name;
      expected.insert(key);
      auto it = c.optimizer.tensors.find(key);
      if (it == c.optimizer.tensors.end())
        fail("{}: no moment '{}' for weight '{}'", c.optimizer_path, key, name);
      expect_f32(it->second, c.optimizer_path, key);
      if (it->second.shape() != t.shape())
        fail("{}: moment '{}' has shape {} but weight '{}' has {}", c.optimizer_path, key,
             it->second.shape().str(), name, t.shape().str());
    }
  }
  for (const auto& [name, t] : c.optimizer.tensors)
    if (!expected.count(name))
      fail("{}: tensor '{}' matches no weight of the checkpoint", c.optimizer_path, name);

  const std::string text = read_text_file(c.state_path, "the training state");
  c.state = nlohmann::json::parse(text, nullptr, false);
  if (c.state.is_discarded() || !c.state.is_object())
    fail("{}: the training state is not a JSON object (the file is corrupt?)", c.state_path);
  auto step = c.state.find("step");
  if (step == c.state.end() || !step->is_number_integer() || step->get<int64_t>() < 0)
    fail("{}: no non-negative integer \"step\" in the training state", c.state_path);
  c.step = step->get<int64_t>();
  c.adam_steps = parse_int_metadata(c.optimizer, c.optimizer_path, "steps", c.step);
  return c;
}

// The first key whose value differs between two JSON objects, for error messages.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  for (const auto& [key, value] : a.items()) {
    auto it = b.find(key);
    if (it == b.end()) return fmt::format("{} is {} and missing", key, value.dump());
    if (*it != value) return fmt::format("{} is {} and {}", key, value.dump(), it->dump());
  }
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return fmt::format("{} is missing and {}", key, value.dump());
  return "no difference";
}

}  // namespace

void set_checkpoint_fault_hook(std::function<void(const char* point)> hook) {
  fault_hook() = std::move(hook);
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
  make_dir(ckpt_dir);
  if (!had_ckpt_dir) {
    sync_dir(root);
    sync_dir(fs::absolute(root).parent_path());
  }
  remove_leftovers(root, ckpt_dir);

  const std::string name = step_name(step);
  const fs::path final_dir = ckpt_dir / name;
  const fs::path tmp = ckpt_dir / fmt::format("{}{}{}", name, kTmpMarker, ::getpid());
  try {
    if (::mkdir(tmp.c_str(), 0777) != 0) {
      const int e = errno;
      fail("{}: cannot create the temporary checkpoint dir: {}", tmp.string(), errno_message(e));
    }
    // Each write is atomic and synced, directory included (io/atomic_file.h).
    io::save_weights(model, join(tmp, kWeightsFile), {{"step", std::to_string(step)}});
    fault_point("after-weights");
    io::save_safetensors(join(tmp, kOptimizerFile), optimizer_tensors(adam),
                         {{"steps", std::to_string(adam.steps())}});
    fault_point("after-optimizer");
    if (ema) save_ema(model, *ema, join(tmp, kEmaFile), step);
    nlohmann::json state = trainer_state.is_null() ? nlohmann::json::object() : trainer_state;
    state["step"] = step;
    io::write_file_atomically(join(tmp, kStateFile), state.dump(2) + "\n");
    fault_point("after-state");
    sync_dir(tmp);
    fault_point("before-rename");
    install_dir(tmp, final_dir);
    sync_dir(ckpt_dir);
  } catch (...) {
    fs::remove_all(tmp, ec);  // best effort; the next save removes it otherwise
    throw;
  }
  fault_point("after-rename");

  io::save_weights(model, join(root, kWeightsFile), {{"step", std::to_string(step)}});
  fault_point("after-latest");

  if (keep > 0) {
    std::vector<std::string> others;
    for (const std::string& c : list_checkpoints(model_dir))
      if (fs::path(c).filename() != name) others.push_back(c);
    const size_t excess = others.size() + 1 > static_cast<size_t>(keep)
                              ? others.size() + 1 - static_cast<size_t>(keep)
                              : 0;
    for (size_t i = 0; i < excess && i < others.size(); ++i) delete_checkpoint(others[i]);
    if (excess > 0) {
      try {
        sync_dir(ckpt_dir);
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
  if (f.tensors.size() != params.size())
    fail("{}: {} tensors, the model has {} parameters", path, f.tensors.size(), params.size());
  std::vector<Tensor> loaded;
  for (const Param* p : params) {
    const auto it = f.tensors.find(p->name);
    if (it == f.tensors.end()) fail("{}: no average of parameter '{}'", path, p->name);
    expect_f32(it->second, path, p->name);
    if (it->second.shape() != p->value.shape())
      fail("{}: tensor '{}' has shape {}, the model expects {}", path, p->name,
           it->second.shape().str(), p->value.shape().str());
    loaded.push_back(it->second.clone());
  }
  ema = std::move(loaded);
  return true;
}

void save_model_snapshot(const std::string& model_dir, const std::string& name,
                         const Transformer& model, const nlohmann::json& info) {
  const fs::path root(model_dir);
  const fs::path final_dir = root / name;
  const fs::path tmp = root / fmt::format("{}{}{}", name, kTmpMarker, ::getpid());
  std::error_code ec;
  // What a killed save left: <name>.tmp-<pid>[-replaced].
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (e.path().filename().string().rfind(name + kTmpMarker, 0) == 0) {
      std::error_code rec;
      fs::remove_all(e.path(), rec);
    }
  try {
    make_dir(tmp);
    io::save_weights(model, join(tmp, kWeightsFile), {{"info", info.dump()}});
    write_model_config(tmp.string(), model.config());
    copy_if_present(root, tmp, "spm.model");
    copy_if_present(root, tmp, "parse.json");
    io::write_file_atomically(join(tmp, name + ".json"), info.dump(2) + "\n");
    sync_dir(tmp);
    fault_point("snapshot-before-rename");
    install_dir(tmp, final_dir);
    sync_dir(root);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
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
  for (const Param* p : model.parameters()) {
    auto it = c.weights.tensors.find(p->name);
    if (it == c.weights.tensors.end())
      fail("{}: the model needs tensor '{}' but the file has none", c.weights_path, p->name);
    if (it->second.shape() != p->value.shape())
      fail("{}: tensor '{}' has shape {}, the model expects {}", c.weights_path, p->name,
           it->second.shape().str(), p->value.shape().str());
  }
  if (c.weights.tensors.size() != model.parameters().size()) {
    for (const auto& [name, t] : c.weights.tensors)
      if (!model.find(name))
        fail("{}: tensor '{}' is not a parameter of this model", c.weights_path, name);
  }
  const ParamList& params = adam.parameters();
  const std::vector<Tensor>& m = adam.first_moments();
  const std::vector<Tensor>& v = adam.second_moments();
  TD_CHECK(m.size() == params.size() && v.size() == params.size(),
           "Adam has {} parameters but {} and {} moments", params.size(), m.size(), v.size());
  std::vector<std::pair<const Tensor*, const Tensor*>> moments;  // (m, v) per Adam parameter
  for (const Param* p : params) {
    auto mi = c.optimizer.tensors.find("m." + p->name);
    auto vi = c.optimizer.tensors.find("v." + p->name);
    if (mi == c.optimizer.tensors.end() || vi == c.optimizer.tensors.end())
      fail("{}: no moments for parameter '{}'", c.optimizer_path, p->name);
    if (mi->second.shape() != p->value.shape())
      fail("{}: moment 'm.{}' has shape {}, the model expects {}", c.optimizer_path, p->name,
           mi->second.shape().str(), p->value.shape().str());
    moments.emplace_back(&mi->second, &vi->second);
  }

  io::load_weights(model, c.weights, c.weights_path);
  for (size_t i = 0; i < params.size(); ++i) {
    m[i].copy_from(*moments[i].first);
    v[i].copy_from(*moments[i].second);
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

void average_checkpoints(const std::vector<std::string>& checkpoint_dirs,
                         const std::string& out_path) {
  if (checkpoint_dirs.empty()) fail("{}: no checkpoints to average", out_path);
  ModelConfig config;
  nlohmann::json config_json;
  std::string first_path;
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::vector<double>> sums;
  for (const std::string& dir : checkpoint_dirs) {
    const std::string path = join(dir, kWeightsFile);
    if (!regular_file_exists(path)) fail("{}: missing: not a checkpoint", path);
    io::SafetensorsFile f = io::load_safetensors(path);
    const ModelConfig c = io::config_from_metadata(f, path);
    const nlohmann::json cj = c;
    if (first_path.empty()) {
      first_path = path;
      config = c;
      config_json = cj;
      for (const auto& [name, t] : f.tensors) {
        expect_f32(t, path, name);
        shapes.emplace(name, t.shape());
        sums.emplace(name, std::vector<double>(static_cast<size_t>(t.numel()), 0.0));
      }
    } else {
      if (cj != config_json)
        fail("{}: its model config differs from {}'s ({}): cannot average different models", path,
             first_path, first_difference(config_json, cj));
      for (const auto& [name, t] : f.tensors) {
        auto it = shapes.find(name);
        if (it == shapes.end())
          fail("{}: tensor '{}' is not in {}: cannot average different tensor sets", path, name,
               first_path);
        expect_f32(t, path, name);
        if (t.shape() != it->second)
          fail("{}: tensor '{}' has shape {} but {} in {}", path, name, t.shape().str(),
               it->second.str(), first_path);
      }
      if (f.tensors.size() != shapes.size())
        for (const auto& [name, shape] : shapes)
          if (!f.tensors.count(name))
            fail("{}: has no tensor '{}', which {} has: cannot average different tensor sets", path,
                 name, first_path);
    }
    for (const auto& [name, t] : f.tensors) {
      std::vector<double>& sum = sums.at(name);
      const float* x = t.f32();
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<double>(x[i]);
    }
  }

  const double n = static_cast<double>(checkpoint_dirs.size());
  std::map<std::string, Tensor> mean;
  for (const auto& [name, sum] : sums) {
    Tensor t = Tensor::empty(shapes.at(name));
    float* y = t.f32();
    for (size_t i = 0; i < sum.size(); ++i) y[i] = static_cast<float>(sum[i] / n);
    mean.emplace(name, std::move(t));
  }
  std::map<std::string, std::string> metadata;
  metadata["config"] = config_json.dump();
  metadata["averaged_from"] = nlohmann::json(checkpoint_dirs).dump();
  io::save_safetensors(out_path, mean, metadata);
}

void write_model_config(const std::string& model_dir, const ModelConfig& config) {
  make_dir(model_dir);
  const nlohmann::json j = config;
  io::write_file_atomically(join(model_dir, kConfigFile), j.dump(2) + "\n");
}

ModelConfig read_model_config(const std::string& model_dir) {
  const std::string path = join(model_dir, kConfigFile);
  if (!regular_file_exists(path)) fail("{}: missing: {} is not a model directory", path, model_dir);
  const std::string text = read_text_file(path, "the model config");
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) fail("{}: not valid JSON", path);
  if (!j.is_object()) fail("{}: should hold a JSON object, not {}", path, j.type_name());
  ModelConfig c;
  try {
    c = j.get<ModelConfig>();
    c.validate();
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  } catch (const nlohmann::json::exception& e) {
    fail("{}: a field has the wrong type: {}", path, e.what());
  }
  return c;
}

}  // namespace transduce
