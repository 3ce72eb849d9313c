// The training loop's synthetic task: reverse random strings of 3..7 tokens over ids 4..19, with
// a model and options small enough to learn it in seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "text/example.h"
#include "train/trainer.h"

namespace transduce::testing {

std::vector<Example> reverse_task(int n, uint64_t seed);
// 2 + 2 layers, d_model 32, 4 heads, vocabulary 20, no dropout or label smoothing.
ModelConfig reversal_config();
// Batches of 256 tokens, warmup 100 at scale 0.5, no validation or checkpoints by default.
TrainOptions reversal_options();
// The task's ids as text, one letter a word (4 -> "a", ..., 19 -> "p"), for BLEU on it.
std::string reversal_text(const std::vector<int32_t>& ids);

}  // namespace transduce::testing
