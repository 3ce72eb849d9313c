// Data parallelism over a Communicator: summing the gradients of every rank in buckets, giving
// every rank rank 0's weights, and checking that the ranks still hold the same weights.
#pragma once

#include <cstdint>
#include <vector>

#include "dist/communicator.h"
#include "model/param.h"

namespace transduce {

class GradientSync {
 public:
  // Small gradients are packed into buckets of up to `bucket_bytes` and summed with one call
  // each (fewer messages); a gradient of at least that size is summed where it lies, in pieces of
  // that size. Open MPI's shared-memory all-reduce moves 2.2-2.5 GB/s here up to 16 MB and
  // 0.4 GB/s from 32 MB on (docs/experiments/data-parallel.md): messages stay small.
  GradientSync(const ParamList& params, Communicator& comm, int64_t bucket_bytes = 4 << 20);

  // Every parameter's gradient becomes the sum of that gradient over all ranks.
  void sum();
  // Collective calls one sum() makes.
  int64_t calls_per_sum() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  struct Slice {
    Param* param;
    int64_t offset, numel;
  };
  struct Bucket {
    std::vector<Slice> slices;  // one piece of a large gradient, or whole small ones
    int64_t numel = 0;
    bool in_place = false;  // a piece of a gradient of at least a bucket's size
  };
  Communicator& comm_;
  std::vector<Bucket> buckets_;
  std::vector<float> staging_;  // packed gradients of the largest multi-tensor bucket
};

// Copies rank 0's parameter values to every rank.
void broadcast_parameters(const ParamList& params, Communicator& comm);

// A hash of the parameter values' bytes: equal weights give equal digests.
uint64_t parameters_digest(const ParamList& params);

}  // namespace transduce
