#include "dist/gradient_sync.h"

#include <algorithm>
#include <cstring>

#include "core/rng.h"

namespace transduce {

GradientSync::GradientSync(const ParamList& params, Communicator& comm, int64_t bucket_bytes)
    : comm_(comm) {
  const int64_t bucket_numel = std::max<int64_t>(1, bucket_bytes / int64_t{sizeof(float)});
  for (Param* p : params) {
    const int64_t n = p->grad.numel();
    if (n >= bucket_numel) {
      for (int64_t at = 0; at < n; at += bucket_numel) {
        const int64_t piece = std::min(bucket_numel, n - at);
        buckets_.push_back(Bucket{{Slice{p, at, piece}}, piece, /*in_place=*/true});
      }
      continue;
    }
    if (buckets_.empty() || buckets_.back().in_place || buckets_.back().numel + n > bucket_numel)
      buckets_.push_back(Bucket{});
    buckets_.back().slices.push_back(Slice{p, 0, n});
    buckets_.back().numel += n;
  }
  int64_t staging = 0;
  for (const Bucket& b : buckets_)
    if (!b.in_place) staging = std::max(staging, b.numel);
  staging_.resize(static_cast<size_t>(staging));
}

void GradientSync::sum() {
  for (Bucket& b : buckets_) {
    if (b.slices.size() == 1) {
      const Slice& s = b.slices[0];
      comm_.sum(s.param->grad.f32() + s.offset, s.numel, "the gradient sum");
      continue;
    }
    float* out = staging_.data();
    for (const Slice& s : b.slices) {
      std::copy_n(s.param->grad.f32() + s.offset, s.numel, out);
      out += s.numel;
    }
    comm_.sum(staging_.data(), b.numel, "the gradient sum");
    const float* in = staging_.data();
    for (const Slice& s : b.slices) {
      std::copy_n(in, s.numel, s.param->grad.f32() + s.offset);
      in += s.numel;
    }
  }
}

void broadcast_parameters(const ParamList& params, Communicator& comm) {
  for (Param* p : params) comm.broadcast(p->value.f32(), p->value.nbytes(), "the first weights");
}

uint64_t parameters_digest(const ParamList& params) {
  uint64_t h = 0;
  for (const Param* p : params) {
    const auto* bytes = static_cast<const unsigned char*>(p->value.raw());
    const size_t n = p->value.nbytes();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      h = hash_u64(h, word, i);
    }
    for (; i < n; ++i) h = hash_u64(h, bytes[i], i);
  }
  return h;
}

}  // namespace transduce
