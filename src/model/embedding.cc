#include "model/embedding.h"

#include <cmath>

#include "core/error.h"
#include "core/phase_clock.h"
#include "model/linear.h"
#include "ops/ops.h"

namespace transduce {

SharedEmbedding::SharedEmbedding(int64_t vocab, int64_t d_model)
    : weight("embedding.weight", {vocab, d_model}),
      scale_(static_cast<float>(std::sqrt(static_cast<double>(d_model)))) {
  weight.gemm_weight = true;
}

Tensor SharedEmbedding::lookup(Context& ctx, const Tensor& ids) const {
  // An int8 model looks its rows up in int8 (Transformer::set_precision).
  const bool int8 = !weight.value.defined();
  TD_CHECK(!int8 || weight.int8.q.defined(), "{} has neither fp32 nor int8 rows to look up",
           weight.name);
  const Tensor& table = int8 ? weight.int8.q : weight.value;
  Tensor out = ctx.alloc({ids.dim(0), ids.dim(1), table.dim(1)});
  ops::embedding_gather(table, ids, scale_, out, int8 ? weight.int8.scales : Tensor());
  return out;
}

void SharedEmbedding::lookup_backward(const Tensor& ids, const Tensor& dout) {
  ops::embedding_scatter_add(dout, ids, scale_, weight.grad);
}

Tensor SharedEmbedding::project(Context& ctx, const Tensor& h) const {
  const PhaseScope phase(Phase::kOutputProjection);
  Shape shape = h.shape();
  shape[shape.ndim() - 1] = weight.int8.defined() ? weight.int8.rows() : weight.value.dim(0);
  Tensor logits = ctx.alloc(shape);
  if (weight.int8.defined()) {
    ops::gemm_int8(h, weight.int8, Tensor(), logits);
    return logits;
  }
  const bool bf16 = weight.bf16.defined();
  if (ctx.inference && weight.packed.defined()) {
    ops::linear_packed(gemm_operand(ctx, h, bf16), weight.packed, Tensor(), false, logits);
    return logits;
  }
  ops::gemm(gemm_operand(ctx, h, bf16), false, bf16 ? weight.bf16 : weight.value, true, logits);
  return logits;
}

Tensor SharedEmbedding::project_backward(Context& ctx, const Tensor& h, const Tensor& dlogits,
                                         const Tensor& dh_into) {
  const bool bf16 = weight.bf16.defined();
  const Tensor dlogits_op = gemm_operand(ctx, dlogits, bf16);
  ops::gemm(dlogits_op, true, gemm_operand(ctx, h, bf16), false, weight.grad, 1.0f, 1.0f);
  const Tensor dh = dh_into.defined() ? dh_into : ctx.alloc(h.shape());
  ops::gemm(dlogits_op, false, bf16 ? weight.bf16 : weight.value, false, dh);
  return dh;
}

}  // namespace transduce
