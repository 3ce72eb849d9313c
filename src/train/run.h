// Training as one library call (section 5): a new model from parallel text or a treebank, or a
// model directory resumed. `transduce train` and the Python module's train() both fill a
// TrainRequest and call train_model(); the progress comes back through callbacks.
#pragma once

#include <optional>
#include <string>

#include "dist/communicator.h"
#include "train/train_request.h"

namespace transduce {

// Trains as `request` says, on this process or as one rank of `comm`. Errors name the settings
// (request.name). SIGINT, SIGTERM and SIGUSR1 stop it at the next update, with a checkpoint.
void train_model(const TrainRequest& request, Communicator* comm = nullptr);

// train_model() under mpirun as one of its ranks, or alone: connects the ranks (waiting at most
// request.dist_timeout seconds for them), gives each its share of the machine's cores unless
// `threads_given`, and ends every rank when one fails.
void train_model_on_ranks(const TrainRequest& request, bool threads_given);

// The newest checkpoint of `model_dir` that loads, or an error.
std::string checkpoint_to_resume(const std::string& model_dir);

// The options a run trains with: a new model's as requested; a resumed one's those saved with
// `checkpoint`, overridden by the options given.
TrainOptions resolved_train_options(const TrainRequest& request,
                                    const std::optional<std::string>& checkpoint);

}  // namespace transduce
