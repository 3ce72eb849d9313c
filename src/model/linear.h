// y = x W^T + b, with W stored [out, in] as in PyTorch.
#pragma once

#include "model/context.h"
#include "model/param.h"

namespace transduce {

// t as a GEMM operand: rounded to bf16 (into ctx's arena) when `bf16` and t is F32, else t itself.
Tensor gemm_operand(Context& ctx, const Tensor& t, bool bf16);

class Linear {
 public:
  Linear(const std::string& name, int64_t in, int64_t out);

  // x [..., in] -> [..., out]; saves x for backward (not when translating with packed or int8
  // weights: Param::packed, Param::int8). x may already be gemm_input's result (several layers
  // reading one input round it once).
  Tensor forward(Context& ctx, const Tensor& x);
  // max(forward(x), 0) as an `out` tensor (BF16 only for a bf16 model), the ReLU and the rounding
  // done in the product's epilogue where the library has one: the feed-forward hidden layer.
  Tensor forward_relu(Context& ctx, const Tensor& x, DType out = DType::F32);
  // x as this layer's GEMM reads it: rounded to bf16 when the weights have a bf16 copy (a bf16
  // model), else x itself.
  Tensor gemm_input(Context& ctx, const Tensor& x) const;
  // Accumulates dW and db; returns dx, or adds dx into `dx_into` (and returns it) when given.
  // With relu_out, dy is the gradient of max(y, 0) = relu_out (F32 or BF16), taken back through
  // the ReLU here (in the pass that sums db and rounds dy for a bf16 model; an fp32 model's dy is
  // overwritten).
  Tensor backward(Context& ctx, const Tensor& dy, const Tensor& dx_into = {},
                  const Tensor& relu_out = {});
  void collect(ParamList& out) {
    out.push_back(&weight);
    out.push_back(&bias);
  }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  Param weight, bias;

 private:
  Shape output_shape(const Tensor& x) const;  // x's, with out_features() last
  // forward (relu false, out F32) and forward_relu: the packed weights when translating with them.
  Tensor product(Context& ctx, const Tensor& x, bool relu, DType out);

  int64_t in_, out_;
  Tensor x_;
};

}  // namespace transduce
