#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "train/adam.h"

namespace transduce {

std::optional<LrSchedule> lr_schedule_from_name(std::string_view name) {
  if (name == "inverse-sqrt") return LrSchedule::kInverseSqrt;
  if (name == "linear") return LrSchedule::kLinear;
  if (name == "cosine") return LrSchedule::kCosine;
  return std::nullopt;
}

std::string lr_schedule_name(LrSchedule schedule) {
  switch (schedule) {
    case LrSchedule::kInverseSqrt:
      return "inverse-sqrt";
    case LrSchedule::kLinear:
      return "linear";
    case LrSchedule::kCosine:
      return "cosine";
  }
  return "inverse-sqrt";
}

float scheduled_learning_rate(LrSchedule schedule, int64_t step, double progress, int d_model,
                              int warmup, float scale) {
  if (schedule == LrSchedule::kInverseSqrt) return noam_learning_rate(step, d_model, warmup, scale);
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(std::max(warmup, 1));
  const double base = scale * std::pow(d_model, -0.5);
  const double rise = base * s * std::pow(w, -1.5);
  const double p = std::clamp(progress, 0.0, 1.0);
  const double share =
      schedule == LrSchedule::kLinear ? 1.0 - p : 0.5 * (1.0 + std::cos(std::numbers::pi * p));
  const double fall = base * std::pow(w, -0.5) * share;
  return static_cast<float>(std::min(rise, fall));
}

}  // namespace transduce
