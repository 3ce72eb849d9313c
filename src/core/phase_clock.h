// Where a step's time goes, by phase: the benchmarks' breakdown (`bench translate --phases`,
// `bench train`). Code opens a PhaseScope of its phase; the time between two scope boundaries
// goes to the innermost open scope, except that nothing inside an absorbing phase (the encoder,
// the output projection) is taken from it. The record is per thread and off unless a PhaseTimes
// is installed on that thread: then a scope costs a thread-local load and a branch.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace transduce {

enum class Phase {
  kOutside,           // on the installing thread, outside every scope
  kSearch,            // a search's own work: normalising a single model's scores row by row and
                      // choosing among them, the bookkeeping, reordering the cache
  kEncode,            // the encoder and the cross-attention keys and values (absorbing)
  kDecoderOther,      // a decoder step outside the phases below: norms, residual adds, ReLU
  kProducts,          // matrix products (with the bias they start from)
  kAttention,         // attention beyond its products: scores, softmax, weighted sums
  kOutputProjection,  // the product over the vocabulary (absorbing)
  kLogSoftmax,        // normalising and combining an ensemble's scores
  kLoss,              // training: the loss over the logits and its gradient
  kUpdate,            // training: the optimizer's update of the parameters
  kCount
};

std::string_view phase_name(Phase p);

struct PhaseTimes {
  std::array<double, static_cast<size_t>(Phase::kCount)> seconds{};
  std::array<int64_t, static_cast<size_t>(Phase::kCount)> scopes{};  // times each was opened

  double& operator[](Phase p) { return seconds[static_cast<size_t>(p)]; }
  double operator[](Phase p) const { return seconds[static_cast<size_t>(p)]; }
  int64_t count(Phase p) const { return scopes[static_cast<size_t>(p)]; }
  double total() const;
};

// Records the calling thread's scopes into `times` while it lives (nested installs are refused).
class PhaseRecording {
 public:
  explicit PhaseRecording(PhaseTimes& times);
  ~PhaseRecording();
  PhaseRecording(const PhaseRecording&) = delete;
  PhaseRecording& operator=(const PhaseRecording&) = delete;
};

class PhaseScope {
 public:
  explicit PhaseScope(Phase p) {
    if (recording_on_this_thread()) open(p);
  }
  ~PhaseScope() {
    if (open_) close();
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  static bool recording_on_this_thread();
  void open(Phase p);
  void close();
  bool open_ = false;
};

}  // namespace transduce
