// The training loop of section 5: token-bucketed batches, gradient accumulation, Adam with the
// schedule of equation 3, periodic logging, validation and checkpoints, exact resume.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/arena.h"
#include "dist/communicator.h"
#include "dist/gradient_sync.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "text/example.h"
#include "train/adam.h"
#include "train/batcher.h"
#include "train/ema.h"
#include "train/lr_schedule.h"
#include "train/train_options.h"
#include "train/validation.h"

namespace transduce {

// What one log line reports, averaged over the updates since the previous one.
struct TrainLog {
  int64_t step = 0;
  int64_t epoch = 0;  // 1-based: the epoch the last batch came from
  double loss = 0;    // label-smoothed, per target token
  double perplexity = 0;
  double learning_rate = 0;
  double tokens_per_second = 0;  // source + target, padding excluded
  int64_t target_tokens = 0;     // target tokens (labels) trained on since the previous line
  double elapsed_seconds = 0;
  // Data-parallel runs: the share of the interval a rank spent summing gradients (mean of ranks).
  double sync_share = 0;
  // With R-Drop: the mean over target tokens of (KL(p||q) + KL(q||p)) / 2 between the two passes.
  std::optional<double> consistency;
  bool validation = false;  // a validation line: loss and perplexity are over the valid set
  // Validation by translation: the scores of the validation set's translations.
  std::optional<double> bleu, chrf;
  bool best = false;  // this validation improved on every earlier one by the deciding metric
  BestValidation best_so_far;
};

// With a communicator of K ranks (data parallelism), every rank runs a Trainer over the same data
// and options: an update takes the next K x accum batches of the epoch plan, rank r trains on the
// r-th run of `accum` of them, the gradients are summed across ranks and every rank applies the
// same update. So K ranks make the updates one process makes with K times the accumulation, the
// schedule of equation 3 counts these global updates, and the position in the data is the same on
// every rank, whatever K a checkpoint is resumed with. Only rank 0 calls the log and progress
// functions and writes checkpoints; validation is shared out.
class Trainer {
 public:
  Trainer(Transformer& model, const std::vector<Example>& train, const std::vector<Example>* valid,
          TrainOptions options, Communicator* comm = nullptr);

  // Continue from a checkpoint: the model and optimizer were restored by load_checkpoint;
  // `state` is the JSON it returned.
  void restore(const nlohmann::json& state);
  // The position in the data and the clocks, as saved in checkpoints.
  nlohmann::json state() const;
  // With --ema-decay: the moving average from the checkpoint, or, when it has none, started from
  // the weights restored (call after restore()). Returns whether the checkpoint had one.
  bool restore_average(const std::string& checkpoint_dir);
  // Called at the start of every epoch with the epoch (0-based) and the training examples to
  // write over: the same pairs in the same order, segmented as that epoch should see them. It
  // must be a pure function of the epoch for resuming to be exact. Set before run().
  using EpochEncoder = std::function<void(int64_t epoch, std::vector<Example>& examples)>;
  void set_epoch_encoder(EpochEncoder encode);
  // What validation by BLEU or chrF needs to translate and score (references, detokenizer).
  void set_valid_text(ValidText text) { valid_text_ = std::move(text); }

  // Trains until a limit is reached or stop() is called; then validates and saves once more.
  // `progress`, when given, is called after every update with the step number.
  void run(const std::function<void(const TrainLog&)>& log,
           const std::function<void(int64_t)>& progress = nullptr);
  // Asks run() to finish after the current update (safe from a signal handler).
  void stop() { stop_requested_ = true; }

  // Mean loss and perplexity over the validation set (dropout off), and the BLEU and chrF of its
  // translations when valid_metrics asks for them; with EMA, of the averaged weights.
  TrainLog validate();
  // The moving average (nullptr without --ema-decay).
  const WeightAverage* average() const { return ema_.get(); }
  const BestValidation& best() const { return best_; }
  int64_t step() const { return step_; }
  // Whether --max-steps, --max-epochs or --max-minutes is reached, or --patience ran out.
  bool limits_reached() const;
  Adam& optimizer() { return adam_; }
  const TrainOptions& options() const { return options_; }

 private:
  // Sums since the last log line, of this rank until they are reported.
  struct Interval {
    double loss = 0, nll = 0, tokens = 0, all_tokens = 0, sync_seconds = 0, consistency = 0;
    int64_t updates = 0;
  };
  // Runs one update over `accum` batches per rank; returns false when the data of max_epochs is
  // used up on every rank.
  bool update(Interval& sums);
  // Passes each batch makes through the model: 2 with R-Drop, else 1.
  int passes() const { return options_.rdrop > 0 ? 2 : 1; }
  const std::vector<int64_t>* next_batch();
  double elapsed() const;
  // The share of the run done before the next update, by the limits, with `seconds` of training.
  double run_share(double seconds) const;
  void save();
  // Runs `f` with the weights validation measures in the model: the moving average when there
  // is one (bf16 copies refreshed both ways), else the weights as they are.
  template <typename F>
  void with_validated_weights(F&& f);
  // A validation, and what follows from it: MODEL_DIR/best/ on improvement (and, through
  // limits_reached(), the end of the run when --patience runs out).
  void validate_and_keep_best(const std::function<void(const TrainLog&)>& log);

  SingleProcess single_process_;
  Communicator& comm_;
  std::unique_ptr<GradientSync> gradient_sync_;  // with more than one rank
  Transformer& model_;
  const std::vector<Example>& train_;
  const std::vector<Example>* valid_;
  TrainOptions options_;
  Batcher batcher_;
  EpochEncoder epoch_encoder_;
  std::vector<Example> epoch_examples_;  // with an epoch encoder, what the batcher reads
  Adam adam_;
  Arena arena_;
  std::unique_ptr<WeightAverage> ema_;
  std::optional<ValidText> valid_text_;
  BestValidation best_;

  int64_t step_ = 0;
  int64_t epoch_ = 0;           // 0-based epoch the next batch comes from
  int64_t batch_in_epoch_ = 0;  // index of the next batch in that epoch's plan
  std::vector<std::vector<int64_t>> plan_;
  int64_t plan_epoch_ = -1;
  double elapsed_before_ = 0;  // training seconds of earlier runs
  double run_start_ = 0;
  double last_save_time_ = 0;
  double agreed_elapsed_ = 0;  // the ranks' mean clock at the last stop check
  float last_lr_ = 0;          // the learning rate of the last update
  std::atomic<bool> stop_requested_{false};
};

}  // namespace transduce
