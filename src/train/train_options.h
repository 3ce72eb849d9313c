// The training options of section 5 and after, and their one declaration: train_option_specs()
// lists every option once, with its key, help, default and range. state.json's options, the
// checks, `transduce train`'s flags, its configuration files and the Python keyword arguments are
// all derived from that list, so that an option is added with one edit there.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/option_spec.h"
#include "model/precision.h"
#include "train/adam.h"
#include "train/lr_schedule.h"
#include "train/validation.h"

namespace transduce {

struct TrainOptions {
  int64_t batch_tokens = 25000;  // per side, padding included (5.1)
  int accum = 1;                 // batches per update
  uint64_t seed = 1;             // batch order and dropout
  int warmup = 4000;
  float lr_scale = 1.0f;
  // The annealing schedules reach 0 at the first limit below to be reached: the share of the run
  // done is the largest of steps / max_steps, epochs / max_epochs and minutes / max_minutes.
  LrSchedule lr_schedule = LrSchedule::kInverseSqrt;
  AdamOptions adam;
  // Stop when any limit is reached; 0 means no limit. Steps count updates, epochs complete passes;
  // minutes count training time across resumed runs.
  int64_t max_steps = 0;
  int64_t max_epochs = 0;
  double max_minutes = 0;
  int64_t log_every = 100;
  int64_t valid_every = 1000;  // 0: only at the end
  // What a validation measures (train/validation.h): the first metric decides which weights
  // MODEL_DIR/best/ keeps and what patience counts. BLEU and chrF translate the validation set
  // (greedy with beam 1, else beam search with valid_alpha's length penalty).
  std::vector<ValidMetric> valid_metrics{ValidMetric::kPerplexity};
  int valid_beam = 1;
  float valid_alpha = 1.0f;
  // Stop after this many validations in a row without improvement (0: never).
  int patience = 0;
  // Where each validation's translations go ("{step}" becomes the update; empty: nowhere).
  std::string valid_output;
  // The exponential moving average of the weights (train/ema.h; 0: none). It is what validation
  // measures and what MODEL_DIR/best/ keeps; MODEL_DIR/ema/ holds it at every checkpoint.
  float ema_decay = 0;
  // Subword regularisation (text/subword_sampler.h): the training pairs segmented anew by
  // sampling every epoch with this alpha (0: the vocabulary's own segmentation throughout). The
  // trainer keeps it with the options; the command that builds the examples acts on it through
  // set_epoch_encoder().
  float subword_sampling = 0;
  // R-Drop (Liang et al., 2021) with this weight (0: off): every batch runs twice through
  // different dropout masks, and the loss adds rdrop times the symmetric KL divergence between the
  // two output distributions at each target position to both passes' cross-entropy (mean over
  // both passes' tokens). An update costs about twice the compute of the same batch without.
  float rdrop = 0;
  // Checkpoints go to out_dir (none when empty; not an option of the list below: the command
  // sets it): every save_every updates and/or every save_every_minutes, and at the end; the
  // newest `keep` are kept.
  std::string out_dir;
  int64_t save_every = 0;
  double save_every_minutes = 10;
  int keep = 5;
  // What the GEMMs compute in (model/precision.h); checkpoints are fp32 either way, so a run may
  // be resumed in the other precision.
  Precision precision = Precision::FP32;
};

// One training option as the outside sees it.
using TrainOptionSpec = OptionSpec<TrainOptions>;

// Every training option, in the order `transduce train --help` lists them.
const std::vector<TrainOptionSpec>& train_option_specs();
// The option with this key (nullptr: none).
const TrainOptionSpec* find_train_option(std::string_view key);

void to_json(nlohmann::json& j, const TrainOptions& o);
// Fields missing from j keep their value in o.
void update_from_json(const nlohmann::json& j, TrainOptions& o);

// Fails with one line naming the option when an option is out of its range, or when the options
// together cannot train (no limit to stop at).
void check_train_options(const TrainOptions& o);

// `message` with every option key in it (a whole word) spelled as `name` says: a library error
// said in the words of its caller ("max_steps" -> "--max-steps").
std::string name_train_options(std::string message,
                               const std::function<std::string(std::string_view key)>& name);

}  // namespace transduce
