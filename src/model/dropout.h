// Dropout that remembers its mask for the backward pass; the identity when not training.
#pragma once

#include "model/context.h"

namespace transduce {

class Dropout {
 public:
  explicit Dropout(float p = 0.0f) : p_(p) {}
  // Returns x itself when inactive, else a new tensor.
  Tensor forward(Context& ctx, const Tensor& x);
  // residual + forward(x), in one pass, written over x and returned: x is a sub-layer's output,
  // which nothing reads afterwards (backward needs only the mask), so its memory serves.
  Tensor forward_add(Context& ctx, const Tensor& residual, const Tensor& x);
  // Returns dy itself when the forward was inactive, else a new tensor.
  Tensor backward(Context& ctx, const Tensor& dy);
  float p() const { return p_; }
  // The last forward's keep mask (U8, non-zero kept), undefined when it was inactive.
  Tensor mask() const { return active_ ? mask_ : Tensor(); }

 private:
  float p_;
  bool active_ = false;
  Tensor mask_;
};

// Word dropout: each token's embedding (a row of the last dimension) kept whole, scaled by
// 1 / (1 - p), or zeroed whole, so that the model learns not to lean on any one word; the
// identity when not training.
class WordDropout {
 public:
  explicit WordDropout(float p = 0.0f) : p_(p) {}
  // Returns x itself when inactive, else a new tensor.
  Tensor forward(Context& ctx, const Tensor& x);
  // Returns dy itself when the forward was inactive, else a new tensor.
  Tensor backward(Context& ctx, const Tensor& dy);
  float p() const { return p_; }

 private:
  float p_;
  bool active_ = false;
  Tensor mask_;
};

}  // namespace transduce
