#include "core/phase_clock.h"

#include <numeric>

#include "core/error.h"

namespace transduce {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxDepth = 32;

struct Recorder {
  PhaseTimes* times = nullptr;
  std::array<Phase, kMaxDepth> stack{};
  int depth = 0;
  Clock::time_point last;

  // The time since the last boundary goes to the innermost open phase.
  void charge(Clock::time_point now) {
    const Phase p = depth == 0 ? Phase::kOutside : stack[static_cast<size_t>(depth - 1)];
    (*times)[p] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};

thread_local Recorder recorder;

bool absorbs(Phase p) {
  return p == Phase::kEncode || p == Phase::kOutputProjection;
}

}  // namespace

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::kOutside:
      return "outside";
    case Phase::kSearch:
      return "search";
    case Phase::kEncode:
      return "encode";
    case Phase::kDecoderOther:
      return "decoder_other";
    case Phase::kProducts:
      return "products";
    case Phase::kAttention:
      return "attention";
    case Phase::kOutputProjection:
      return "output_projection";
    case Phase::kLogSoftmax:
      return "log_softmax";
    case Phase::kLoss:
      return "loss";
    case Phase::kUpdate:
      return "update";
    case Phase::kCount:
      break;
  }
  return "?";
}

double PhaseTimes::total() const {
  return std::accumulate(seconds.begin(), seconds.end(), 0.0);
}

PhaseRecording::PhaseRecording(PhaseTimes& times) {
  TD_CHECK(recorder.times == nullptr, "phase recordings do not nest");
  recorder = Recorder{};
  recorder.times = &times;
  recorder.last = Clock::now();
}

PhaseRecording::~PhaseRecording() {
  recorder.charge(Clock::now());
  recorder.times = nullptr;
}

bool PhaseScope::recording_on_this_thread() {
  return recorder.times != nullptr;
}

void PhaseScope::open(Phase p) {
  Recorder& r = recorder;
  if (r.depth > 0 && absorbs(r.stack[static_cast<size_t>(r.depth - 1)])) return;
  TD_CHECK(r.depth < kMaxDepth, "phase scopes nested deeper than {}", kMaxDepth);
  r.charge(Clock::now());
  r.stack[static_cast<size_t>(r.depth++)] = p;
  ++r.times->scopes[static_cast<size_t>(p)];
  open_ = true;
}

void PhaseScope::close() {
  Recorder& r = recorder;
  if (r.times == nullptr || r.depth == 0) return;  // the recording ended inside the scope
  r.charge(Clock::now());
  --r.depth;
}

}  // namespace transduce
