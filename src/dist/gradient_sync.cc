#include "dist/gradient_sync.h"

#include <algorithm>
#include <cstring>

#include "core/rng.h"

namespace transduce {

GradientSync::GradientSync(const ParamList& params, Communicator& comm, int64_t bucket_bytes)
    : comm_(comm) {
  const int64_t bucket_numel = std::max<int64_t>(1, bucket_bytes / int64_t{sizeof(float)});
  int64_t staging = 0;
  for (Param* p : params) {
    const int64_t n = p->grad.numel();
    if (n >= bucket_numel) {
      buckets_.push_back(Bucket{{p}, n, /*in_place=*/true});
      continue;
    }
    if (buckets_.empty() || buckets_.back().in_place || buckets_.back().numel + n > bucket_numel)
      buckets_.push_back(Bucket{});
    buckets_.back().params.push_back(p);
    buckets_.back().numel += n;
  }
  for (const Bucket& b : buckets_)
    if (b.params.size() > 1) staging = std::max(staging, b.numel);
  staging_.resize(static_cast<size_t>(staging));
}

void GradientSync::sum() {
  for (Bucket& b : buckets_) {
    if (b.params.size() == 1) {
      comm_.sum(b.params[0]->grad.f32(), b.numel, "the gradient sum");
      continue;
    }
    float* out = staging_.data();
    for (Param* p : b.params) {
      std::memcpy(out, p->grad.f32(), p->grad.nbytes());
      out += p->grad.numel();
    }
    comm_.sum(staging_.data(), b.numel, "the gradient sum");
    const float* in = staging_.data();
    for (Param* p : b.params) {
      std::memcpy(p->grad.f32(), in, p->grad.nbytes());
      in += p->grad.numel();
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
