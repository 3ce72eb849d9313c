// `transduce train`'s flags for the training options, made from their one declaration
// (train/train_options.h): --batch-tokens for batch_tokens, with its help, default and range.
#pragma once

#include <CLI/CLI.hpp>

#include "train/train_options.h"

namespace transduce::cli {

// A flag for every option of train_option_specs(), writing into `into` when given.
void add_train_option_flags(CLI::App& cmd, TrainOptions& into);

}  // namespace transduce::cli
