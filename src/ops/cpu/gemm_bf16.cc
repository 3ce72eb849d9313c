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

// Everything a primitive is specialised for: the shapes, the layouts, the scaling, and the
// threads it splits the work between (fixed when it is created).
using Key =
    std::tuple<int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t, int64_t, float, float, int>;

struct Product {
  dnnl::matmul primitive;
  memory::desc a, b, c, scratchpad;
  std::string kernel;
};

Product make_product(const Key& key) {
  const auto [m, n, k, trans_a, trans_b, lda, ldb, ldc, alpha, beta, threads] = key;
  (void)threads;
  // Row-major op(A) [m, k] and op(B) [k, n], transposition by strides alone.
  const memory::desc a({m, k}, memory::data_type::bf16,
                       trans_a ? memory::dims{1, lda} : memory::dims{lda, 1});
  const memory::desc b({k, n}, memory::data_type::bf16,
                       trans_b ? memory::dims{1, ldb} : memory::dims{ldb, 1});
  const memory::desc c({m, n}, memory::data_type::f32, memory::dims{ldc, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops post;
    post.append_sum(beta);
    attr.set_post_ops(post);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, onednn_engine());
  return {dnnl::matmul(pd), a, b, c, pd.scratchpad_desc(), pd.impl_info_str()};
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
  const Product& p = product_for(
      Key{m, n, k, trans_a, trans_b, a.cols(), b.cols(), c.cols(), alpha, beta, num_threads()});
  dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  p.primitive.execute(stream,
                      {{DNNL_ARG_SRC, memory(p.a, engine, a.raw())},
                       {DNNL_ARG_WEIGHTS, memory(p.b, engine, b.raw())},
                       {DNNL_ARG_DST, memory(p.c, engine, c.raw())},
                       {DNNL_ARG_SCRATCHPAD,
                        memory(p.scratchpad, engine, onednn_scratchpad(p.scratchpad.get_size()))}});
  stream.wait();
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
  return product_for(Key{m, n, k, trans_a, trans_b, lda, ldb, n, alpha, beta, num_threads()})
      .kernel;
}

}  // namespace transduce::ops
