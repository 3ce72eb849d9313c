// Learning-rate schedules: equation 3 of the paper, and two that anneal to zero at the end of a
// run whose length is known in advance (by its step, epoch or time limit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace transduce {

enum class LrSchedule {
  kInverseSqrt,  // equation 3: linear warmup, then proportional to step^-0.5
  kLinear,       // equation 3's warmup to its peak, then falling linearly to 0 at the end
  kCosine,       // the same warmup, then half a cosine from the peak down to 0 at the end
};

// "inverse-sqrt", "linear", "cosine"; nullopt for anything else.
std::optional<LrSchedule> lr_schedule_from_name(std::string_view name);
std::string lr_schedule_name(LrSchedule schedule);

// The learning rate of update `step` (1-based). `progress` is the share of the run done, in
// [0, 1]: the annealing schedules use it, equation 3 ignores it. During warmup all three are
// equation 3, times `scale`; the annealing ones then follow peak * f(progress), where peak is
// equation 3's value at step == warmup, and never exceed the warmup line (so the switch is
// continuous whatever share of the run the warmup takes).
float scheduled_learning_rate(LrSchedule schedule, int64_t step, double progress, int d_model,
                              int warmup, float scale = 1.0f);

}  // namespace transduce
