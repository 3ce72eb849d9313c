// int8 products through oneDNN's matmul: s8 activations and weights, exact s32 sums, then one
// pass of our own that scales them back to fp32 and adds the bias. oneDNN 2.6 picks its fast
// kernels (brgemm on AMX or AVX512-VNNI) only for a fixed number of rows and without a per-row
// scale in its epilogue (measured: a run-time row count or run-time scales fall back to gemm:jit,
// 3-7 times slower; a row scale as a binary post-op to the reference kernel, thousands of times
// slower), so products are made per row count, rounded up to 16, for at most 256 rows at a time,
// and the row scales are applied here. Without VNNI (AVX2 alone), oneDNN multiplies bytes with
// vpmaddubsw, whose 16-bit pair sums saturate (measured with ONEDNN_MAX_CPU_ISA=AVX2: wrong
// products, not just slow ones); there the weights are kept row-major, widened to int16, and
// int8_sums makes the same exact sums.
#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/phase_clock.h"
#include "core/threads.h"
#include "ops/cpu/check.h"
#include "ops/cpu/int8_sums.h"
#include "ops/cpu/onednn.h"
#include "ops/ops.h"

namespace transduce::ops {

namespace {

using dnnl::memory;

// (rows, n, k, threads): a primitive's threads are fixed when it is made.
using Key = std::tuple<int64_t, int64_t, int64_t, int>;

struct Product {
  dnnl::matmul primitive;
  memory::desc src, weights, dst, scratchpad;
  std::string kernel;
};

// A product covers at most this many rows: longer inputs are multiplied a block of rows at a time,
// so that the quantized rows and their s32 sums (the thread's buffers below) stay a few MB, not the
// size of an encoder batch's activations.
constexpr int64_t kBlockRows = 256;

// Rows rounded up to 16 (AMX's tile height), so that a decoder whose batch shrinks step by step
// reuses a few products.
int64_t row_bucket(int64_t rows) {
  return (rows + 15) / 16 * 16;
}

Product make_product(const Key& key) {
  const auto [m, n, k, threads] = key;
  (void)threads;
  const memory::desc src({m, k}, memory::data_type::s8, memory::dims{k, 1});
  const memory::desc any({k, n}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst({m, n}, memory::data_type::s32, memory::dims{n, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any, dst), attr, onednn_engine());
  return {dnnl::matmul(pd), src, pd.weights_desc(), dst, pd.scratchpad_desc(), pd.impl_info_str()};
}

const Product& product_for(int64_t rows, int64_t n, int64_t k) {
  static OnceCache<Key, Product> products;
  const Key key{rows, n, k, product_threads(rows, n, k)};
  return products.get(key, [&] {
    try {
      return make_product(key);
    } catch (const dnnl::error& e) {
      fail("oneDNN cannot make an int8 product of {} x {} x {}: {}", rows, n, k, e.what());
    }
  });
}

// q [n, k] read as the product's B = q^T [k, n]: row-major q is B with strides (1, k).
memory::desc plain_weights(int64_t n, int64_t k) {
  return memory::desc({k, n}, memory::data_type::s8, memory::dims{1, k});
}

// m's weights in `layout`: reordered from q, or from the packed copy once q is released.
std::shared_ptr<dnnl::memory> reorder_weights(const Int8Matrix& m, const memory::desc& layout) {
  const memory source = m.q.defined()
                            ? memory(plain_weights(m.rows(), m.cols()), onednn_engine(), m.q.raw())
                            : *static_cast<const memory*>(m.packed.get());
  return onednn_reordered(source, layout);
}

}  // namespace

// Whether oneDNN's products run on int8 dot-product instructions (fixed once oneDNN has looked).
bool native_int8() {
  static const bool native = int8_support().available;
  return native;
}

void pack_int8(Int8Matrix& m) {
  require_cpu({&m.q, &m.scales});
  TD_CHECK(m.q.dtype() == DType::I8 && m.q.ndim() == 2 && m.scales.dtype() == DType::F32 &&
               m.scales.numel() == m.q.dim(0),
           "an int8 matrix is I8 [n, k] with F32 scales [n], not {} {} with {} {}",
           dtype_name(m.q.dtype()), m.q.shape().str(), dtype_name(m.scales.dtype()),
           m.scales.shape().str());
  // oneDNN's blocked layout for B depends on n, k and the instruction set, not on the rows
  // (checked at each product, which reorders again if it ever differs).
  if (native_int8()) {
    m.packed = reorder_weights(m, product_for(16, m.rows(), m.cols()).weights);
  } else {
    // int8_sums reads int16: the integers widened once here, row-major as q.
    const int8_t* q = m.q.i8();
    auto wide = std::make_shared<std::vector<int16_t>>(q, q + m.q.numel());
    m.packed = std::move(wide);
  }
  m.packed_cols = m.cols();
}

namespace {

// gemm_int8 on `rows` (<= kBlockRows) rows of x [rows, k] into y [rows, n].
void gemm_int8_block(const float* x, int64_t rows, int64_t k, const Int8Matrix& w,
                     const float* bias, float* y) {
  const int64_t n = w.rows(), padded = native_int8() ? row_bucket(rows) : rows;

  // Quantized rows and their s32 sums live in the calling thread's buffers; the padding rows are
  // zeros (their sums are computed and ignored).
  thread_local std::vector<int8_t> xq;
  thread_local std::vector<float> x_scales;
  thread_local std::vector<int32_t> sums;
  if (xq.size() < static_cast<size_t>(padded * k)) xq.resize(padded * k);
  if (x_scales.size() < static_cast<size_t>(padded)) x_scales.resize(padded);
  if (sums.size() < static_cast<size_t>(padded * n)) sums.resize(padded * n);
  quantize_rows(Tensor::borrow(const_cast<float*>(x), {rows, k}),
                Tensor::borrow(xq.data(), {rows, k}, DType::I8),
                Tensor::borrow(x_scales.data(), {rows}));
  std::memset(xq.data() + rows * k, 0, (padded - rows) * k);

  const int threads = product_threads(padded, n, k);
  if (!native_int8()) {
    thread_local std::vector<int16_t> x_wide;
    x_wide.assign(xq.begin(), xq.begin() + rows * k);
    int8_sums(x_wide.data(), rows, static_cast<const std::vector<int16_t>*>(w.packed.get())->data(),
              n, k, sums.data(), threads);
  } else {
    const auto* packed = static_cast<const memory*>(w.packed.get());
    const Product& p = product_for(padded, n, k);
    dnnl::engine& engine = onednn_engine();
    std::shared_ptr<memory> repacked;
    if (packed->get_desc() != p.weights) {
      repacked = reorder_weights(w, p.weights);
      packed = repacked.get();
    }
    dnnl::stream& stream = onednn_stream();
    // oneDNN's OpenMP build splits a product among omp_get_max_threads() threads.
    const ScopedOmpThreads team(threads);
    p.primitive.execute(
        stream, {{DNNL_ARG_SRC, memory(p.src, engine, xq.data())},
                 {DNNL_ARG_WEIGHTS, *packed},
                 {DNNL_ARG_DST, memory(p.dst, engine, sums.data())},
                 {DNNL_ARG_SCRATCHPAD,
                  memory(p.scratchpad, engine, onednn_scratchpad(p.scratchpad.get_size()))}});
    stream.wait();
  }

  // y = x_scale[i] * w_scale[j] * sum + bias[j].
  const float* ws = w.scales.f32();
  const int32_t* s = sums.data();
  const float* xs = x_scales.data();
#pragma omp parallel for schedule(static) if (threads > 1 && parallel_worth_it(rows * n))
  for (int64_t i = 0; i < rows; ++i) {
    const int32_t* si = s + i * n;
    float* yi = y + i * n;
    const float row_scale = xs[i];
    if (bias) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j)
        yi[j] = static_cast<float>(si[j]) * (row_scale * ws[j]) + bias[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yi[j] = static_cast<float>(si[j]) * (row_scale * ws[j]);
    }
  }
}

}  // namespace

void gemm_int8(const Tensor& x, const Int8Matrix& w, const Tensor& bias, const Tensor& y) {
  const PhaseScope phase(Phase::kProducts);
  require_cpu({&x, &y, &w.scales});
  const int64_t rows = x.rows(), k = x.cols(), n = w.rows();
  TD_CHECK(w.packed != nullptr, "gemm_int8 with an unpacked matrix (call pack_int8)");
  TD_CHECK(w.cols() == k && y.rows() == rows && y.cols() == n && y.dtype() == DType::F32 &&
               x.dtype() == DType::F32 && (!bias.defined() || bias.numel() == n),
           "gemm_int8: x {} times W^T [{}, {}] into {} (bias {})", x.shape().str(), w.rows(),
           w.cols(), y.shape().str(), bias.defined() ? bias.shape().str() : "none");
  if (bias.defined()) require_cpu({&bias});
  for (int64_t r = 0; r < rows; r += kBlockRows)
    gemm_int8_block(x.f32() + r * k, std::min(kBlockRows, rows - r), k, w,
                    bias.defined() ? bias.f32() : nullptr, y.f32() + r * n);
}

Int8Support int8_support() {
  return {
      onednn_isa_has(dnnl::cpu_isa::avx512_core_vnni) || onednn_isa_has(dnnl::cpu_isa::avx2_vnni),
      onednn_isa_name()};
}

std::string int8_gemm_kernel(int64_t m, int64_t n, int64_t k) {
  if (!native_int8()) return "int8_sums (no int8 dot-product instructions)";
  return product_for(row_bucket(std::min(m, kBlockRows)), n, k).kernel;
}

}  // namespace transduce::ops
