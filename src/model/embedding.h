// The one embedding matrix shared by the source and target embeddings and the pre-softmax
// projection (section 3.4). Lookups are scaled by sqrt(d_model); the projection is not.
#pragma once

#include "model/context.h"
#include "model/param.h"

namespace transduce {

class SharedEmbedding {
 public:
  SharedEmbedding(int64_t vocab, int64_t d_model);

  // ids I32 [B, L] -> [B, L, d] = E[ids] * sqrt(d_model).
  Tensor lookup(Context& ctx, const Tensor& ids) const;
  void lookup_backward(const Tensor& ids, const Tensor& dout);
  // h [..., d] -> logits [..., V] = h E^T.
  Tensor project(Context& ctx, const Tensor& h) const;
  // Accumulates dE from (h, dlogits); returns dh, written into dh_into when given. dlogits may
  // be BF16 (a bf16 model's).
  Tensor project_backward(Context& ctx, const Tensor& h, const Tensor& dlogits,
                          const Tensor& dh_into = {});
  void collect(ParamList& out) { out.push_back(&weight); }
  float scale() const { return scale_; }

  Param weight;  // [V, d], "embedding.weight"

 private:
  float scale_;
};

}  // namespace transduce
