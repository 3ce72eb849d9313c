// Products with packed weights (ops/packed_weights.h) through oneDNN's matmul: the weights are
// reordered once into the layout the primitive asks for (format "any"), which depends on n, k, the
// type and the instruction set but not on the rows (checked at each product, which reorders again
// should it ever differ). The bias, the ReLU and a BF16 output's rounding are the product's
// epilogue. fp32 runs on oneDNN's AVX-512 brgemm kernels, or its jit sgemm on AVX2; bf16 only where
// oneDNN has bf16 instructions (elsewhere pack_weights declines and linear_product runs).
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/error.h"
#include "core/phase_clock.h"
#include "core/threads.h"
#include "ops/cpu/check.h"
#include "ops/cpu/onednn.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

using dnnl::memory;

// (rows, n, k, the operands' type, epilogue bits, threads): a primitive's threads are fixed when
// it is made.
using Key = std::tuple<int64_t, int64_t, int64_t, DType, int, int>;

struct Product {
  dnnl::matmul primitive;
  memory::desc src, weights, dst, bias, scratchpad;
  std::string kernel;
  int threads;  // what it was made for, and runs on
};

memory::data_type onednn_type(DType t) {
  return t == DType::BF16 ? memory::data_type::bf16 : memory::data_type::f32;
}

Product make_product(const Key& key) {
  const auto [m, n, k, dtype, epilogue, threads] = key;
  const ScopedOmpThreads team(threads);  // oneDNN sizes its work split when the primitive is made
  const memory::desc src({m, k}, onednn_type(dtype), memory::dims{k, 1});
  const memory::desc any({k, n}, onednn_type(dtype), memory::format_tag::any);
  const memory::desc dst = epilogue_output(epilogue, m, n, n);
  const memory::desc bias = epilogue_bias(epilogue, n);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (epilogue & kRelu) {
    dnnl::post_ops post;
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(post);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any, bias, dst), attr,
                                        onednn_engine());
  return {dnnl::matmul(pd),   src,    pd.weights_desc(), dst, bias, pd.scratchpad_desc(),
          pd.impl_info_str(), threads};
}

const Product& product_for(int64_t rows, int64_t n, int64_t k, DType dtype, int epilogue) {
  static OnceCache<Key, Product> products;
  const Key key{rows, n, k, dtype, epilogue, product_threads(rows, n, k)};
  return products.get(key, [&] {
    try {
      return make_product(key);
    } catch (const dnnl::error& e) {
      fail("oneDNN cannot make a {} product of {} x {} x {} with packed weights: {}",
           dtype_name(dtype), rows, n, k, e.what());
    }
  });
}

}  // namespace

PackedWeights pack_weights(const Tensor& w) {
  require_cpu({&w});
  TD_CHECK(w.ndim() == 2 && (w.dtype() == DType::F32 || w.dtype() == DType::BF16),
           "packed weights are F32 or BF16 [n, k], not {} {}", dtype_name(w.dtype()),
           w.shape().str());
  const int64_t n = w.dim(0), k = w.dim(1);
  if (n == 0 || k == 0) return {};
  if (w.dtype() == DType::BF16 && !bf16_support().available) return {};
  const Product& p = product_for(16, n, k, w.dtype(), kPlain);
  // oneDNN's reference code (a CPU older than AVX2) is far slower than OpenBLAS: keep the plain
  // weights there.
  if (p.kernel.rfind("ref:", 0) == 0) return {};
  // W row-major [n, k] is the product's B = W^T [k, n] with strides (1, k).
  const memory plain(memory::desc({k, n}, onednn_type(w.dtype()), memory::dims{1, k}),
                     onednn_engine(), w.raw());
  return {onednn_reordered(plain, p.weights), w.dtype(), n, k};
}

void linear_packed(const Tensor& x, const PackedWeights& w, const Tensor& bias, bool relu,
                   const Tensor& y) {
  const PhaseScope phase(Phase::kProducts);
  require_cpu({&x, &y});
  TD_CHECK(w.defined(), "linear_packed with weights that were not packed (ops::pack_weights)");
  TD_CHECK(x.dtype() == w.dtype && x.cols() == w.cols && y.rows() == x.rows() &&
               y.cols() == w.rows &&
               (y.dtype() == DType::F32 || (y.dtype() == DType::BF16 && w.dtype == DType::BF16)) &&
               (!bias.defined() || (bias.dtype() == DType::F32 && bias.numel() == w.rows)),
           "linear product with packed weights: {} {} x {} [{}, {}]^T + bias {} -> {} {}",
           dtype_name(x.dtype()), x.shape().str(), dtype_name(w.dtype), w.rows, w.cols,
           bias.defined() ? bias.shape().str() : "none", dtype_name(y.dtype()), y.shape().str());
  if (bias.defined()) require_cpu({&bias});
  const int64_t m = x.rows(), n = w.rows, k = w.cols;
  if (m == 0) return;
  const int epilogue = (bias.defined() ? kBias : kPlain) | (relu ? kRelu : kPlain) |
                       (y.dtype() == DType::BF16 ? kBf16Output : kPlain);
  const Product& p = product_for(m, n, k, w.dtype, epilogue);
  const auto* packed = static_cast<const memory*>(w.memory.get());
  std::shared_ptr<memory> repacked;
  if (packed->get_desc() != p.weights) {
    repacked = onednn_reordered(*packed, p.weights);
    packed = repacked.get();
  }
  dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(p.src, engine, x.raw())},
      {DNNL_ARG_WEIGHTS, *packed},
      {DNNL_ARG_DST, memory(p.dst, engine, y.raw())},
      {DNNL_ARG_SCRATCHPAD,
       memory(p.scratchpad, engine, onednn_scratchpad(p.scratchpad.get_size()))}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(p.bias, engine, bias.raw()));
  // oneDNN's OpenMP build splits a product among omp_get_max_threads() threads.
  const ScopedOmpThreads team(p.threads);
  p.primitive.execute(stream, args);
  stream.wait();
}

std::string packed_gemm_kernel(int64_t m, const PackedWeights& w) {
  TD_CHECK(w.defined(), "packed_gemm_kernel of weights that were not packed");
  return product_for(m, w.rows, w.cols, w.dtype, kPlain).kernel;
}

}  // namespace transduce::ops
