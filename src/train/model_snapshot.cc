#include "train/model_snapshot.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "io/directory.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "train/checkpoint.h"

namespace transduce {

namespace {

namespace fs = std::filesystem;

void copy_if_present(const fs::path& from_dir, const fs::path& to_dir, const char* name) {
  std::error_code ec;
  if (fs::is_regular_file(from_dir / name, ec))
    io::copy_file_atomically((from_dir / name).string(), (to_dir / name).string());
}

}  // namespace

void save_model_snapshot(const std::string& model_dir, const std::string& name,
                         const Transformer& model, const nlohmann::json& info) {
  const fs::path root(model_dir);
  const fs::path final_dir = root / name;
  const std::string temp_prefix = name + std::string(io::kTempMarker);
  const fs::path tmp = root / fmt::format("{}{}", temp_prefix, ::getpid());
  std::error_code ec;
  // What a killed save left: <name>.tmp-<pid>[-replaced].
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (e.path().filename().string().rfind(temp_prefix, 0) == 0) {
      std::error_code rec;
      fs::remove_all(e.path(), rec);
    }
  try {
    io::make_directory(tmp);
    io::save_weights(model, io::model_file(tmp.string(), io::kWeightsFile),
                     {{"info", info.dump()}});
    io::write_model_config(tmp.string(), model.config());
    copy_if_present(root, tmp, io::kVocabularyFile);
    copy_if_present(root, tmp, io::kParseSettingsFile);
    io::write_file_atomically((tmp / (name + ".json")).string(), info.dump(2) + "\n");
    io::sync_directory(tmp);
    reach_fault_point("snapshot-before-rename");
    io::install_directory(tmp, final_dir);
    io::sync_directory(root);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace transduce
