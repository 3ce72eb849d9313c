// BF16 matrix products through oneDNN's matmul primitive: bf16 inputs, fp32 sums and output. The
// primitive for a shape is created once and kept (creating one costs far more than a small
// product); oneDNN picks its kernel when it is created (AMX or AVX512-BF16 on CPUs with them).
// On a CPU without bf16 instructions (oneDNN 2.6 makes no bf16 matmul for AVX2), the operands are
// widened to fp32 and multiplied by OpenBLAS: the same arithmetic, since a product of two bf16
// numbers is exact in fp32 and the sums are fp32 either way.
#include "ops/cpu/gemm_bf16.h"

#include <cblas.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "core/threads.h"
#include "ops/cpu/check.h"
#include "ops/cpu/onednn.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

using dnnl::memory;

// Everything a primitive is specialised for: the shapes, the layouts, the scaling, the epilogue
// and the threads it splits the work between (fixed when it is created).
using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t, int64_t, float,
                       float, int, int>;

struct Product {
  dnnl::matmul primitive;
  memory::desc a, b, c, bias, scratchpad;
  std::string kernel;
};

Product make_product(const Key& key) {
  const auto [m, n, k, trans_a, trans_b, lda, ldb, ldc, alpha, beta, epilogue, threads] = key;
  (void)threads;
  // Row-major op(A) [m, k] and op(B) [k, n], transposition by strides alone.
  const memory::desc a({m, k}, memory::data_type::bf16,
                       trans_a ? memory::dims{1, lda} : memory::dims{lda, 1});
  const memory::desc b({k, n}, memory::data_type::bf16,
                       trans_b ? memory::dims{1, ldb} : memory::dims{ldb, 1});
  const memory::desc c = epilogue_output(epilogue, m, n, ldc);
  const memory::desc bias = epilogue_bias(epilogue, n);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  dnnl::post_ops post;
  if (beta != 0.0f) post.append_sum(beta);
  if (epilogue & kRelu) post.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attr.set_post_ops(post);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, bias, c), attr, onednn_engine());
  return {dnnl::matmul(pd), a, b, c, bias, pd.scratchpad_desc(), pd.impl_info_str()};
}

const Product& product_for(const Key& key) {
  static OnceCache<Key, Product> products;
  return products.get(key, [&] {
    try {
      return make_product(key);
    } catch (const dnnl::error& e) {
      fail("oneDNN cannot make a bf16 product of {} x {} x {}: {}", std::get<0>(key),
           std::get<1>(key), std::get<2>(key), e.what());
    }
  });
}

void check_types(const Tensor& a, const Tensor& b, const Tensor& c) {
  TD_CHECK(a.dtype() == DType::BF16 && b.dtype() == DType::BF16 && c.dtype() == DType::F32,
           "gemm of {} x {} into {}: A and B both BF16 (or both F32), C F32", dtype_name(a.dtype()),
           dtype_name(b.dtype()), dtype_name(c.dtype()));
}

// t's elements as floats, in a buffer of the calling thread's that the next call reuses.
const float* widened(const Tensor& t, std::vector<float>& buffer) {
  const int64_t count = t.numel();
  if (buffer.size() < static_cast<size_t>(count)) buffer.resize(static_cast<size_t>(count));
  const uint16_t* src = t.bf16();
  float* dst = buffer.data();
#pragma omp parallel for simd schedule(static) if (parallel_worth_it(count))
  for (int64_t i = 0; i < count; ++i) dst[i] = bf16_to_float(src[i]);
  return dst;
}

// C = A B (+ bias) through the primitive made for them.
void run(const Product& p, const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& c) {
  dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(p.a, engine, a.raw())},
      {DNNL_ARG_WEIGHTS, memory(p.b, engine, b.raw())},
      {DNNL_ARG_DST, memory(p.c, engine, c.raw())},
      {DNNL_ARG_SCRATCHPAD,
       memory(p.scratchpad, engine, onednn_scratchpad(p.scratchpad.get_size()))}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(p.bias, engine, bias.raw()));
  p.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace

void gemm_bf16_widened(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
                       const Tensor& c, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
  check_types(a, b, c);
  thread_local std::vector<float> wa, wb;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, widened(a, wa), a.cols(),
              widened(b, wb), b.cols(), beta, c.f32(), c.cols());
}

void gemm_bf16(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c,
               int64_t m, int64_t n, int64_t k, float alpha, float beta) {
  static const bool native = bf16_support().available;
  if (!native) return gemm_bf16_widened(a, trans_a, b, trans_b, c, m, n, k, alpha, beta);
  check_types(a, b, c);
  run(product_for(Key{m, n, k, trans_a, trans_b, a.cols(), b.cols(), c.cols(), alpha, beta, kPlain,
                      num_threads()}),
      a, b, Tensor(), c);
}

void linear_product_bf16(const Tensor& x, const Tensor& w, const Tensor& bias, bool relu,
                         const Tensor& y) {
  TD_CHECK(x.dtype() == DType::BF16 && w.dtype() == DType::BF16 && bias.dtype() == DType::F32 &&
               (y.dtype() == DType::F32 || y.dtype() == DType::BF16),
           "linear product of {} x {} + {} bias into {}: BF16 operands, an F32 bias, F32 or BF16 "
           "out",
           dtype_name(x.dtype()), dtype_name(w.dtype()), dtype_name(bias.dtype()),
           dtype_name(y.dtype()));
  const int64_t m = x.rows(), n = w.rows(), k = x.cols();
  static const bool native = bf16_support().available;
  if (!native || k == 0) {  // the same numbers: the fp32 sums, the bias, the ReLU, then rounding
    thread_local std::vector<float> sums;
    Tensor out = y;
    if (y.dtype() == DType::BF16) {
      sums.resize(static_cast<size_t>(m * n));
      out = Tensor::borrow(sums.data(), y.shape());
    }
    fill_rows(out, bias);
    if (k > 0) gemm_bf16_widened(x, false, w, true, out, m, n, k, 1.0f, 1.0f);
    if (y.dtype() == DType::BF16)
      relu ? relu_to_bf16(out, y) : to_bf16(out, y);
    else if (relu)
      relu_forward(out, out);
    return;
  }
  const int epilogue =
      kBias | (relu ? kRelu : kPlain) | (y.dtype() == DType::BF16 ? kBf16Output : kPlain);
  run(product_for(Key{m, n, k, false, true, k, k, n, 1.0f, 0.0f, epilogue, num_threads()}), x, w,
      bias, y);
}

Bf16Support bf16_support() {
  return {onednn_isa_has(dnnl::cpu_isa::avx512_core_bf16), onednn_isa_name()};
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
}

std::string bf16_gemm_kernel(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                             float alpha, float beta) {
  if (!bf16_support().available) return "widened to fp32 for " + fp32_gemm_library();
  // Contiguous operands, as gemm() is given them: A [m, k] or [k, m], B [k, n] or [n, k].
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  return product_for(
             Key{m, n, k, trans_a, trans_b, lda, ldb, n, alpha, beta, kPlain, num_threads()})
      .kernel;
}

}  // namespace transduce::ops
