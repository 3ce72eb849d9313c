// Token-budget batching of section 5.1: sentence pairs of similar length are grouped so that each
// batch holds about `batch_tokens` source and `batch_tokens` target tokens, padding included.
#pragma once

#include <cstdint>
#include <vector>

#include "model/transformer.h"
#include "text/example.h"

namespace transduce {

struct BatcherOptions {
  int64_t batch_tokens = 25000;  // budget per side, counting padding: B * max_len <= batch_tokens
  uint64_t seed = 1;
};

class Batcher {
 public:
  // Keeps the pointer: `examples` must outlive the batcher. Throws Error on a null or empty
  // example list or on batch_tokens <= 0.
  Batcher(const std::vector<Example>* examples, BatcherOptions options);

  // The batches of epoch `epoch` (0-based) as lists of example indices. A pure function of
  // (examples, options, epoch), so resuming at (epoch, position) replays the same batches.
  // Every example appears exactly once. Each epoch shuffles the examples, stable-sorts them by
  // (max(source, target) length, target length, source length) so equal-length pairs keep a
  // random order, cuts the sorted run greedily into batches within the budget on both sides
  // (an example over the budget alone gets a batch of its own), and shuffles the batch order.
  std::vector<std::vector<int64_t>> epoch_plan(int64_t epoch) const;

  // Token tensors (I32) for one batch: src = source + EOS, tgt_in = BOS + target,
  // tgt_out = target + EOS, each right-padded with PAD to the longest in the batch.
  Batch make_batch(const std::vector<int64_t>& indices) const;

  // Lengths the model sees: the source with its EOS, the target with BOS (input) or EOS (output).
  static int64_t source_length(const Example& e) { return static_cast<int64_t>(e.src.size()) + 1; }
  static int64_t target_length(const Example& e) { return static_cast<int64_t>(e.tgt.size()) + 1; }

  const BatcherOptions& options() const { return options_; }
  int64_t size() const { return static_cast<int64_t>(examples_->size()); }

 private:
  const std::vector<Example>* examples_;
  BatcherOptions options_;
};

}  // namespace transduce
