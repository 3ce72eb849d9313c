// `transduce train`'s flags for the training options, made from their one declaration
// (train/train_options.h): --batch-tokens for batch_tokens, with its help, default and range.
#pragma once

#include <CLI/CLI.hpp>

#include "train/train_options.h"

namespace transduce::cli {

// A flag for every option of train_option_specs(), writing into `into` when given.
void add_train_option_flags(CLI::App& cmd, TrainOptions& into);

// check_train_options(), its errors naming the flags instead of the settings.
void check_train_options_as_flags(const TrainOptions& options);

// The options of `given` whose flags were given (on the command line or in a configuration file),
// written over `options`: a resumed run's saved options, overridden.
void apply_given_train_options(const CLI::App& cmd, const TrainOptions& given,
                               TrainOptions& options);

}  // namespace transduce::cli
