// Fused attention for inference: scores, mask, softmax and the weighted sum of values per query
// in one pass over that query's keys, without a probability tensor. In incremental decoding a
// head's query meets a few dozen keys: one BLAS call per (sentence, head) would cost more in call
// overhead than the arithmetic. Keys and values are fp32, or int8 with a scale per head's vector
// (an int8 model's decoder caches), converted as they are read.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/bf16.h"
#include "core/phase_clock.h"
#include "ops/cpu/check.h"
#include "ops/cpu/fast_exp.h"
#include "ops/cpu/quantize_vector.h"
#include "ops/ops.h"
#include "ops/visible_keys.h"

namespace transduce::ops {

namespace {

// A bf16 number as a key or value is read: converted to float by static_cast, as the kernels
// convert every element type.
struct Bf16 {
  uint16_t bits;
  explicit operator float() const { return bf16_to_float(bits); }
};

// Head h of vector row `row`: d values of type T from `data`, rows `data_stride` bytes apart,
// and (int8) its scale among the row's floats at `scales`, rows `scales_stride` bytes apart.
template <class T>
struct Heads {
  const char* data;
  int64_t data_stride;
  const char* scales;
  int64_t scales_stride;
  int64_t d;

  const T* at(int64_t row, int64_t h) const {
    return reinterpret_cast<const T*>(data + row * data_stride) + h * d;
  }
  float scale(int64_t row, int64_t h) const {
    if constexpr (std::is_same_v<T, int8_t>) {
      return reinterpret_cast<const float*>(scales + row * scales_stride)[h];
    } else {
      return 1.0f;
    }
  }
};

template <class T>
Heads<T> heads_view(const HeadVectors& t, int64_t heads) {
  const int64_t width = t.data.dim(t.data.ndim() - 1);
  const char* scales = t.scales.defined() ? static_cast<const char*>(t.scales.raw()) : nullptr;
  return {static_cast<const char*>(t.data.raw()), width * static_cast<int64_t>(sizeof(T)), scales,
          heads * static_cast<int64_t>(sizeof(float)), width / heads};
}

// Where a history row keeps its scales (int8): after the keys and values, 4-byte aligned.
int64_t history_scales_offset(const KvHistory& h) {
  return (h.heads * (h.dk + h.dv) + 3) / 4 * 4;
}

// The keys (or values) of a history's rows.
template <class T>
Heads<T> history_view(const KvHistory& h, bool values) {
  const char* base = static_cast<const char*>(h.rows.raw());
  const int64_t stride = h.rows.dim(3);
  const int64_t data_offset = values ? h.heads * h.dk * static_cast<int64_t>(sizeof(T)) : 0;
  const int64_t scales_offset =
      history_scales_offset(h) + (values ? h.heads * static_cast<int64_t>(sizeof(float)) : 0);
  return {base + data_offset, stride, h.element == DType::I8 ? base + scales_offset : nullptr,
          stride, values ? h.dv : h.dk};
}

// Scratch of one thread's attention: each visible key's score (then weight) and vector row.
// Kept per thread and grown as needed, so that a decoding step allocates nothing.
struct AttendScratch {
  std::vector<float> p;
  std::vector<int64_t> row;
  std::vector<int64_t> at;  // the key's position j
};

AttendScratch& attend_scratch(int64_t lk) {
  thread_local AttendScratch s;
  if (static_cast<int64_t>(s.p.size()) < lk) {
    s.p.resize(static_cast<size_t>(lk));
    s.row.resize(static_cast<size_t>(lk));
    s.at.resize(static_cast<size_t>(lk));
  }
  return s;
}

// Keys are taken four at a time: four dot products (or four weighted values) in one pass over d
// are four independent chains of multiply-adds, where one at a time waits on each add's latency.
constexpr int64_t kKeysAtOnce = 4;

// One query qi of head h over keys first <= j < visible, stored at vector rows key_row(j);
// hidden(j) skips a key. Writes the context ci [dv] and, when wi is given, the weights wi
// [visible] (zero where hidden or before `first`; the caller zeroes the rest).
template <class T, class KeyRow, class Hidden>
void attend_one(const float* qi, int64_t h, const Heads<T>& keys, const Heads<T>& values,
                int64_t first, int64_t visible, KeyRow key_row, Hidden hidden, float scale,
                AttendScratch& s, float* ci, float* wi) {
  const int64_t dk = keys.d, dv = values.d;
  int64_t n = 0;  // visible keys
  for (int64_t j = first; j < visible; ++j) {
    if (hidden(j)) continue;
    s.at[n] = j;
    s.row[n++] = key_row(j);
  }
  float* p = s.p.data();
  const int64_t* row = s.row.data();
  std::fill(ci, ci + dv, 0.0f);
  if (wi) std::fill(wi, wi + visible, 0.0f);
  if (n == 0) return;  // every key hidden

  int64_t i = 0;
  for (; i + kKeysAtOnce <= n; i += kKeysAtOnce) {
    const T* k0 = keys.at(row[i], h);
    const T* k1 = keys.at(row[i + 1], h);
    const T* k2 = keys.at(row[i + 2], h);
    const T* k3 = keys.at(row[i + 3], h);
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#pragma omp simd reduction(+ : d0, d1, d2, d3)
    for (int64_t d = 0; d < dk; ++d) {
      d0 += qi[d] * static_cast<float>(k0[d]);
      d1 += qi[d] * static_cast<float>(k1[d]);
      d2 += qi[d] * static_cast<float>(k2[d]);
      d3 += qi[d] * static_cast<float>(k3[d]);
    }
    p[i] = scale * keys.scale(row[i], h) * d0;
    p[i + 1] = scale * keys.scale(row[i + 1], h) * d1;
    p[i + 2] = scale * keys.scale(row[i + 2], h) * d2;
    p[i + 3] = scale * keys.scale(row[i + 3], h) * d3;
  }
  for (; i < n; ++i) {
    const T* kj = keys.at(row[i], h);
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t d = 0; d < dk; ++d) dot += qi[d] * static_cast<float>(kj[d]);
    p[i] = scale * keys.scale(row[i], h) * dot;
  }

  float mx = p[0];
  for (int64_t j = 1; j < n; ++j) mx = std::max(mx, p[j]);
  if (mx == -std::numeric_limits<float>::infinity()) return;  // no key scores above -inf
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    p[j] = fast_exp(p[j] - mx);
    sum += p[j];
  }
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) {
    p[j] *= inv;
    if (wi) wi[s.at[j]] = p[j];
  }

  i = 0;
  for (; i + kKeysAtOnce <= n; i += kKeysAtOnce) {
    const T* v0 = values.at(row[i], h);
    const T* v1 = values.at(row[i + 1], h);
    const T* v2 = values.at(row[i + 2], h);
    const T* v3 = values.at(row[i + 3], h);
    const float w0 = p[i] * values.scale(row[i], h), w1 = p[i + 1] * values.scale(row[i + 1], h),
                w2 = p[i + 2] * values.scale(row[i + 2], h),
                w3 = p[i + 3] * values.scale(row[i + 3], h);
#pragma omp simd
    for (int64_t d = 0; d < dv; ++d)
      ci[d] += (w0 * static_cast<float>(v0[d]) + w1 * static_cast<float>(v1[d])) +
               (w2 * static_cast<float>(v2[d]) + w3 * static_cast<float>(v3[d]));
  }
  for (; i < n; ++i) {
    const T* vj = values.at(row[i], h);
    const float w = p[i] * values.scale(row[i], h);
#pragma omp simd
    for (int64_t d = 0; d < dv; ++d) ci[d] += w * static_cast<float>(vj[d]);
  }
}

// The keys' and values' element type: they agree, and when int8 carry scales of [..., heads].
DType element_type(const HeadVectors& keys, const HeadVectors& values, int64_t heads) {
  const DType kt = keys.data.dtype();
  TD_CHECK((kt == DType::F32 || kt == DType::BF16 || kt == DType::I8) && values.data.dtype() == kt,
           "attention over {} keys and {} values", dtype_name(kt), dtype_name(values.data.dtype()));
  if (kt != DType::I8) return kt;
  for (const HeadVectors* t : {&keys, &values}) {
    require_cpu({&t->scales});
    TD_CHECK(t->scales.dtype() == DType::F32 &&
                 t->scales.numel() * t->data.dim(t->data.ndim() - 1) == t->data.numel() * heads,
             "int8 attention store {} with scales {} for {} heads", t->data.shape().str(),
             t->scales.shape().str(), heads);
  }
  return kt;
}

template <class T>
void attention_inference_as(const Tensor& q, const HeadVectors& keys_t, const HeadVectors& values_t,
                            int64_t lk, int64_t heads, float scale, const uint8_t* pad, bool causal,
                            int64_t causal_offset, int64_t window, const Tensor& context,
                            const Tensor& probs) {
  const int64_t batch = q.dim(0), lq = q.dim(1), cap = keys_t.data.dim(1);
  const Heads<T> keys = heads_view<T>(keys_t, heads), values = heads_view<T>(values_t, heads);
  const int64_t wq = q.dim(2), wv = context.dim(2);
  float* pw = probs.defined() ? probs.f32() : nullptr;
  const float* pq = q.f32();
  float* pc = context.f32();
#pragma omp parallel if (parallel_worth_it(batch * heads * lq * lk * (keys.d + values.d)))
  {
    AttendScratch& scratch = attend_scratch(lk);
#pragma omp for schedule(static)
    for (int64_t bh = 0; bh < batch * heads; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      const uint8_t* prow = pad ? pad + b * lk : nullptr;
      for (int64_t i = 0; i < lq; ++i) {
        const KeyRange range = visible_keys(i + causal_offset, lk, causal, window);
        const int64_t visible = range.end;
        float* wi = pw ? pw + ((b * heads + h) * lq + i) * lk : nullptr;
        if (wi) std::fill(wi + visible, wi + lk, 0.0f);
        attend_one(
            pq + (b * lq + i) * wq + h * keys.d, h, keys, values, range.first, visible,
            [&](int64_t j) { return b * cap + j; }, [&](int64_t j) { return prow && prow[j]; },
            scale, scratch, pc + (b * lq + i) * wv + h * values.d, wi);
      }
    }
  }
}

template <class T>
void attention_history_as(const Tensor& q, const KvHistory& hist, int64_t layer, int64_t lk,
                          float scale, int64_t window, const Tensor& context, const Tensor& probs) {
  const int64_t n = q.dim(0), heads = hist.heads, slots = hist.slots(), layers = hist.layers();
  const Heads<T> keys = history_view<T>(hist, false), values = history_view<T>(hist, true);
  const int64_t wq = q.dim(1), wv = context.dim(1);
  const int32_t* slot_of = hist.slot_of.i32();
  float* pw = probs.defined() ? probs.f32() : nullptr;
  const float* pq = q.f32();
  float* pc = context.f32();
#pragma omp parallel if (parallel_worth_it(n * heads * lk * (keys.d + values.d)))
  {
    AttendScratch& scratch = attend_scratch(lk);
#pragma omp for schedule(static)
    for (int64_t rh = 0; rh < n * heads; ++rh) {
      const int64_t r = rh / heads, h = rh % heads;
      // The new position is lk - 1: with a window, only the positions `window` before it.
      attend_one(
          pq + r * wq + h * keys.d, h, keys, values, visible_keys(lk - 1, lk, true, window).first,
          lk, [&](int64_t j) { return (j * layers + layer) * slots + slot_of[j * slots + r]; },
          [](int64_t) { return false; }, scale, scratch, pc + r * wv + h * values.d,
          pw ? pw + (r * heads + h) * lk : nullptr);
    }
  }
}

}  // namespace

void attention_inference(const Tensor& q, const HeadVectors& keys, const HeadVectors& values,
                         int64_t lk, int64_t heads, float scale, const Tensor& key_pad, bool causal,
                         int64_t causal_offset, const Tensor& context, const Tensor& probs,
                         int64_t window) {
  const PhaseScope phase(Phase::kAttention);
  const Tensor& k = keys.data;
  const Tensor& v = values.data;
  require_cpu({&q, &k, &v, &context});
  const int64_t batch = q.dim(0), lq = q.dim(1), cap = k.dim(1);
  TD_CHECK(q.ndim() == 3 && k.ndim() == 3 && v.ndim() == 3 && context.ndim() == 3 &&
               k.dim(0) == batch && v.dim(0) == batch && v.dim(1) == cap && lk <= cap &&
               heads > 0 && q.dim(2) % heads == 0 && k.dim(2) == q.dim(2) &&
               v.dim(2) % heads == 0 && context.dim(0) == batch && context.dim(1) == lq &&
               context.dim(2) == v.dim(2),
           "attention_inference q {} keys {} values {} over {} keys, {} heads -> {}",
           q.shape().str(), k.shape().str(), v.shape().str(), lk, heads, context.shape().str());
  TD_CHECK(!probs.defined() || (probs.ndim() == 4 && probs.dim(0) == batch &&
                                probs.dim(1) == heads && probs.dim(2) == lq && probs.dim(3) == lk),
           "attention_inference weights {} for {} sentences, {} heads, {} queries, {} keys",
           probs.shape().str(), batch, heads, lq, lk);
  const uint8_t* pad = key_pad_data(key_pad, batch, lk);
  switch (element_type(keys, values, heads)) {
    case DType::I8:
      attention_inference_as<int8_t>(q, keys, values, lk, heads, scale, pad, causal, causal_offset,
                                     window, context, probs);
      break;
    case DType::BF16:
      attention_inference_as<Bf16>(q, keys, values, lk, heads, scale, pad, causal, causal_offset,
                                   window, context, probs);
      break;
    default:
      attention_inference_as<float>(q, keys, values, lk, heads, scale, pad, causal, causal_offset,
                                    window, context, probs);
  }
}

int64_t KvHistory::row_bytes(DType element, int64_t heads, int64_t dk, int64_t dv) {
  TD_CHECK(element == DType::F32 || element == DType::BF16 || element == DType::I8,
           "a decoder history of {} keys and values", dtype_name(element));
  if (element != DType::I8) return heads * (dk + dv) * dtype_size(element);
  KvHistory h;
  h.heads = heads;
  h.dk = dk;
  h.dv = dv;
  return history_scales_offset(h) + 2 * heads * static_cast<int64_t>(sizeof(float));
}

namespace {

void check_history(const KvHistory& h, int64_t layer, int64_t position) {
  require_cpu({&h.rows, &h.slot_of});
  TD_CHECK(h.rows.dtype() == DType::U8 && h.rows.ndim() == 4 && h.slot_of.dtype() == DType::I32 &&
               h.slot_of.ndim() == 2 && h.rows.dim(0) == h.capacity() &&
               h.rows.dim(2) == h.slots() &&
               h.rows.dim(3) == KvHistory::row_bytes(h.element, h.heads, h.dk, h.dv) &&
               0 <= layer && layer < h.layers() && 0 <= position && position < h.capacity(),
           "decoder history {} (slots {}) at layer {}, position {}", h.rows.shape().str(),
           h.slot_of.shape().str(), layer, position);
}

}  // namespace

void store_history(const KvHistory& h, int64_t layer, int64_t position, const Tensor& keys,
                   const Tensor& values) {
  const PhaseScope phase(Phase::kAttention);
  check_history(h, layer, position);
  require_cpu({&keys, &values});
  const int64_t n = keys.rows(), hk = h.heads * h.dk, hv = h.heads * h.dv;
  TD_CHECK(keys.cols() == hk && values.cols() == hv && values.rows() == n && n <= h.slots() &&
               keys.dtype() == DType::F32 && values.dtype() == DType::F32,
           "store_history of keys {} and values {} into {} slots of {} + {}", keys.shape().str(),
           values.shape().str(), h.slots(), hk, hv);
  const int64_t stride = h.rows.dim(3), offset = history_scales_offset(h);
  char* base =
      static_cast<char*>(h.rows.raw()) + (position * h.layers() + layer) * h.slots() * stride;
  const float* pk = keys.f32();
  const float* pv = values.f32();
#pragma omp parallel for schedule(static) if (parallel_worth_it(n * (hk + hv)))
  for (int64_t r = 0; r < n; ++r) {
    char* row = base + r * stride;
    if (h.element == DType::F32) {
      std::memcpy(row, pk + r * hk, hk * sizeof(float));
      std::memcpy(row + hk * sizeof(float), pv + r * hv, hv * sizeof(float));
      continue;
    }
    if (h.element == DType::BF16) {
      auto* b = reinterpret_cast<uint16_t*>(row);
      for (int64_t j = 0; j < hk; ++j) b[j] = float_to_bf16(pk[r * hk + j]);
      for (int64_t j = 0; j < hv; ++j) b[hk + j] = float_to_bf16(pv[r * hv + j]);
      continue;
    }
    auto* q = reinterpret_cast<int8_t*>(row);
    auto* scales = reinterpret_cast<float*>(row + offset);
    for (int64_t head = 0; head < h.heads; ++head) {
      scales[head] = quantize_vector(pk + r * hk + head * h.dk, h.dk, q + head * h.dk);
      scales[h.heads + head] =
          quantize_vector(pv + r * hv + head * h.dv, h.dv, q + hk + head * h.dv);
    }
  }
}

void attention_history(const Tensor& q, const KvHistory& h, int64_t layer, int64_t lk, float scale,
                       const Tensor& context, const Tensor& probs, int64_t window) {
  const PhaseScope phase(Phase::kAttention);
  check_history(h, layer, std::max<int64_t>(lk - 1, 0));
  require_cpu({&q, &context});
  const int64_t n = q.dim(0), slots = h.slots();
  TD_CHECK(q.ndim() == 2 && context.ndim() == 2 && n <= slots && 0 < lk &&
               q.dim(1) == h.heads * h.dk && context.dim(0) == n &&
               context.dim(1) == h.heads * h.dv,
           "attention_history q {} -> {} over {} positions of {} slots, {} heads of {} + {}",
           q.shape().str(), context.shape().str(), lk, slots, h.heads, h.dk, h.dv);
  TD_CHECK(!probs.defined() || (probs.ndim() == 4 && probs.dim(0) == n && probs.dim(1) == h.heads &&
                                probs.dim(2) == 1 && probs.dim(3) == lk),
           "attention_history weights {} for {} rows, {} heads, {} positions", probs.shape().str(),
           n, h.heads, lk);
  const int32_t* slot_of = h.slot_of.i32();
  for (int64_t j = 0; j < lk; ++j)
    for (int64_t r = 0; r < n; ++r)
      TD_CHECK(slot_of[j * slots + r] >= 0 && slot_of[j * slots + r] < slots,
               "history slot {} of {} at position {}", slot_of[j * slots + r], slots, j);
  switch (h.element) {
    case DType::I8:
      attention_history_as<int8_t>(q, h, layer, lk, scale, window, context, probs);
      break;
    case DType::BF16:
      attention_history_as<Bf16>(q, h, layer, lk, scale, window, context, probs);
      break;
    default:
      attention_history_as<float>(q, h, layer, lk, scale, window, context, probs);
  }
}

}  // namespace transduce::ops
