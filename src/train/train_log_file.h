// The machine-readable training log: MODEL_DIR/train_log.jsonl, one JSON object a line, one line
// per log or validation line of `transduce train`. Plots and reports read it instead of the text
// log.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "train/trainer.h"

namespace transduce {

// {"kind": "train"|"valid", "step", "epoch", "loss", "ppl", "elapsed_seconds", and for training
// lines "lr", "tokens_per_second", "target_tokens", in data-parallel runs "sync_share": the
// share of the time spent summing gradients, and with R-Drop "consistency": the mean symmetric KL
// divergence between the two passes (TrainLog::consistency); for validation lines "best" (whether
// it improved on the best so far by the deciding metric) and, when the validation set was
// translated, "bleu" and "chrf"}.
nlohmann::json train_log_record(const TrainLog& log);

class TrainLogFile {
 public:
  // A new model (resume_step < 0) starts an empty file. A resumed one keeps the records up to and
  // including resume_step and drops later ones: they were written by a run that stopped before
  // its next checkpoint, and the resumed run writes those steps again.
  TrainLogFile(std::string path, int64_t resume_step);
  ~TrainLogFile();
  TrainLogFile(const TrainLogFile&) = delete;
  TrainLogFile& operator=(const TrainLogFile&) = delete;

  // Appends one record and flushes it, so a crash loses at most the line being written.
  void write(const TrainLog& log);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace transduce
