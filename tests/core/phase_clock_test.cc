// PhaseScope and PhaseRecording: time goes to the innermost open scope, absorbing phases keep what
// is inside them, nothing is recorded without a recording on the thread, and the phases add up to
// the recording's whole time.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "core/phase_clock.h"

namespace transduce {
namespace {

using Clock = std::chrono::steady_clock;

// Waits (busily, so the time is on this thread) until `seconds` have passed.
void spend(double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
  }
}

constexpr double kSlice = 0.004;

TEST(PhaseClock, InnermostScopeTakesTheTime) {
  PhaseTimes t;
  const auto start = Clock::now();
  {
    const PhaseRecording recording(t);
    const PhaseScope search(Phase::kSearch);
    spend(kSlice);
    {
      const PhaseScope products(Phase::kProducts);
      spend(2 * kSlice);
    }
    spend(kSlice);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(t[Phase::kProducts], 2 * kSlice);
  EXPECT_GE(t[Phase::kSearch], 2 * kSlice);
  EXPECT_EQ(t.count(Phase::kSearch), 1);
  EXPECT_EQ(t.count(Phase::kProducts), 1);
  // Every moment of the recording is charged once: the product's time is not also the search's.
  EXPECT_LE(t.total(), elapsed);
  EXPECT_GE(t.total(), 4 * kSlice);
}

TEST(PhaseClock, AbsorbingPhaseKeepsWhatIsInside) {
  PhaseTimes t;
  {
    const PhaseRecording recording(t);
    const PhaseScope projection(Phase::kOutputProjection);
    const PhaseScope products(Phase::kProducts);  // a product inside the projection
    spend(kSlice);
  }
  EXPECT_GE(t[Phase::kOutputProjection], kSlice);
  EXPECT_EQ(t[Phase::kProducts], 0.0);
  EXPECT_EQ(t.count(Phase::kProducts), 0);
}

TEST(PhaseClock, TimeOutsideEveryScopeIsOutside) {
  PhaseTimes t;
  {
    const PhaseRecording recording(t);
    spend(kSlice);
  }
  EXPECT_GE(t[Phase::kOutside], kSlice);
  EXPECT_EQ(t.total(), t[Phase::kOutside]);
}

TEST(PhaseClock, NothingIsRecordedWithoutARecording) {
  PhaseTimes t;
  {
    const PhaseScope products(Phase::kProducts);
    spend(kSlice);
  }
  EXPECT_EQ(t.total(), 0.0);
  // A recording on another thread does not see this thread's scopes.
  std::thread other([&] {
    const PhaseRecording recording(t);
    spend(kSlice);
  });
  {
    const PhaseScope products(Phase::kProducts);
    spend(kSlice);
  }
  other.join();
  EXPECT_EQ(t[Phase::kProducts], 0.0);
  EXPECT_GE(t[Phase::kOutside], kSlice);
}

TEST(PhaseClock, RecordingsDoNotNest) {
  PhaseTimes a, b;
  const PhaseRecording recording(a);
  EXPECT_ANY_THROW(PhaseRecording inner(b));
}

TEST(PhaseClock, ScopeOutlivingItsRecordingIsHarmless) {
  PhaseTimes t;
  auto recording = std::make_unique<PhaseRecording>(t);
  {
    const PhaseScope products(Phase::kProducts);
    spend(kSlice);
    recording.reset();  // ends inside the scope: the scope's close must not touch the record
  }
  EXPECT_GE(t[Phase::kProducts], kSlice);
  PhaseTimes again;
  const PhaseRecording next(again);  // and a new recording starts clean
  spend(kSlice);
  EXPECT_EQ(again[Phase::kProducts], 0.0);
}

}  // namespace
}  // namespace transduce
