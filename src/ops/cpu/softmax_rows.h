// One row of the masked softmax over attention scores and of its backward: the row functions
// behind ops::masked_softmax and softmax_backward, and the fused training attention's backward
// (attention_train.cc). Its forward works on rows padded to whole vectors with a version of its
// own (softmax_padded_row), which sums in another order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/cpu/fast_exp.h"
#include "ops/visible_keys.h"

namespace transduce::ops {

// row [lk] of scores becomes probabilities in place: keys outside `keys` and those with pad[j]
// set (pad optional) get 0; a row with every key hidden becomes zeros.
inline void masked_softmax_row(float* row, int64_t lk, KeyRange keys, const uint8_t* pad) {
  const int64_t first = keys.first, visible = keys.end;
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  float mx = kNone;
  if (pad) {
#pragma omp simd reduction(max : mx)
    for (int64_t j = first; j < visible; ++j) mx = std::max(mx, pad[j] ? kNone : row[j]);
  } else {
#pragma omp simd reduction(max : mx)
    for (int64_t j = first; j < visible; ++j) mx = std::max(mx, row[j]);
  }
  if (mx == kNone) {
    std::fill(row, row + lk, 0.0f);
    return;
  }
  float sum = 0;
  if (pad) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = first; j < visible; ++j) {
      const float e = pad[j] ? 0.0f : fast_exp(row[j] - mx);
      row[j] = e;
      sum += e;
    }
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = first; j < visible; ++j) {
      row[j] = fast_exp(row[j] - mx);
      sum += row[j];
    }
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = first; j < visible; ++j) row[j] *= inv;
  std::fill(row, row + first, 0.0f);
  std::fill(row + visible, row + lk, 0.0f);
}

// d [n] of d(probabilities) becomes d(scores) in place: scale * p * (d - <p, d>).
inline void softmax_backward_row(const float* p, float* d, int64_t n, float scale) {
  float dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < n; ++j) dot += p[j] * d[j];
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) d[j] = scale * p[j] * (d[j] - dot);
}

}  // namespace transduce::ops
