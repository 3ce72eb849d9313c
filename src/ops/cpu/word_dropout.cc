// Word dropout: whole rows (tokens' embeddings) kept or zeroed.
#include "ops/cpu/check.h"
#include "ops/cpu/dropout_keep.h"
#include "ops/cpu/scratch.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

int64_t row_count(const Tensor& x, const Tensor& mask, const char* op) {
  TD_CHECK(x.ndim() >= 1, "{}: a tensor of rows, got {}", op, x.shape().str());
  const int64_t width = x.dim(-1);
  const int64_t rows = width > 0 ? x.numel() / width : 0;
  TD_CHECK(mask.numel() == rows, "{}: mask {} for {} rows", op, mask.shape().str(), rows);
  return rows;
}

// y = x * mask / (1 - p) row by row (the mask read, or drawn and written when `draw`).
void scale_rows(const float* px, float* py, uint8_t* pm, int64_t rows, int64_t width, float p,
                bool draw, uint64_t seed, uint64_t stream) {
  const DropoutKeep rule(p, seed, stream);  // the draw of a row, as dropout's of an element
  const float inv_keep = rule.inv_keep();
#pragma omp parallel for schedule(static) if (parallel_worth_it(rows * width))
  for (int64_t r = 0; r < rows; ++r) {
    if (draw) pm[r] = rule.keep(static_cast<uint64_t>(r));
    const float scale = pm[r] ? inv_keep : 0.0f;
    const float* in = px + r * width;
    float* out = py + r * width;
    for (int64_t i = 0; i < width; ++i) out[i] = in[i] * scale;
  }
}

}  // namespace

void word_dropout_forward(const Tensor& x, const Tensor& y, const Tensor& mask, float p,
                          uint64_t seed, uint64_t stream) {
  require_cpu({&x, &y});
  TD_CHECK(x.numel() == y.numel(), "word_dropout: {} vs {}", x.shape().str(), y.shape().str());
  if (p == 0.0f) {
    if (y.f32() != x.f32()) y.copy_from(x);
    return;
  }
  require_cpu({&mask});
  const int64_t rows = row_count(x, mask, "word_dropout");
  scale_rows(x.f32(), y.f32(), mask.u8(), rows, rows ? x.numel() / rows : 0, p, true, seed, stream);
}

void word_dropout_backward(const Tensor& dy, const Tensor& mask, float p, const Tensor& dx) {
  require_cpu({&dy, &dx});
  TD_CHECK(dy.numel() == dx.numel(), "word_dropout_backward: {} vs {}", dy.shape().str(),
           dx.shape().str());
  if (p == 0.0f) {
    if (dx.f32() != dy.f32()) dx.copy_from(dy);
    return;
  }
  require_cpu({&mask});
  const int64_t rows = row_count(dy, mask, "word_dropout_backward");
  scale_rows(dy.f32(), dx.f32(), mask.u8(), rows, rows ? dy.numel() / rows : 0, p, false, 0, 0);
}

}  // namespace transduce::ops
