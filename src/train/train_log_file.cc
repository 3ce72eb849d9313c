#include "train/train_log_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "io/atomic_file.h"

namespace transduce {

nlohmann::json train_log_record(const TrainLog& l) {
  nlohmann::json j = {{"kind", l.validation ? "valid" : "train"},
                      {"step", l.step},
                      {"epoch", l.epoch},
                      {"loss", l.loss},
                      {"ppl", l.perplexity},
                      {"elapsed_seconds", l.elapsed_seconds}};
  if (!l.validation) {
    j["lr"] = l.learning_rate;
    j["tokens_per_second"] = l.tokens_per_second;
    j["target_tokens"] = l.target_tokens;
    if (l.sync_share > 0) j["sync_share"] = l.sync_share;  // data-parallel runs only
    if (l.consistency) j["consistency"] = *l.consistency;  // R-Drop runs only
  } else {
    if (l.bleu) j["bleu"] = *l.bleu;
    if (l.chrf) j["chrf"] = *l.chrf;
    j["best"] = l.best;
  }
  return j;
}

namespace {

// The lines of an earlier log that a run resumed at `resume_step` keeps. A line that does not
// parse (the last one, cut by a crash) ends the kept part.
std::string kept_lines(const std::string& path, int64_t resume_step) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
      break;
    if (j["step"].get<int64_t>() > resume_step) break;
    kept += line;
    kept += '\n';
  }
  return kept;
}

// Removes the temporary files of rewrites of `path` that a killed run left (io/atomic_file.h
// names them PATH.tmp.PID.N). Only one run writes a model's log, and it has written nothing yet.
void remove_leftover_rewrites(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  std::error_code ec;
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(prefix, 0) != 0 || !e.is_regular_file(ec)) continue;
    std::error_code rec;
    fs::remove(e.path(), rec);
    if (rec)
      spdlog::warn("{}: cannot remove a leftover temporary file: {}", e.path().string(),
                   rec.message());
  }
}

}  // namespace

TrainLogFile::TrainLogFile(std::string path, int64_t resume_step) : path_(std::move(path)) {
  remove_leftover_rewrites(path_);
  io::write_file_atomically(path_,
                            resume_step < 0 ? std::string() : kept_lines(path_, resume_step));
  file_ = std::fopen(path_.c_str(), "a");
  if (!file_) fail("{}: cannot open the training log for writing", path_);
}

TrainLogFile::~TrainLogFile() {
  if (file_) std::fclose(file_);
}

void TrainLogFile::write(const TrainLog& log) {
  const std::string line = train_log_record(log).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    fail("{}: cannot append to the training log", path_);
}

}  // namespace transduce
