#include "ops/cpu/onednn.h"

#include <vector>

#include "core/threads.h"

namespace transduce::ops {

dnnl::engine& onednn_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& onednn_stream() {
  thread_local dnnl::stream stream(onednn_engine());
  return stream;
}

void* onednn_scratchpad(size_t bytes) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < bytes) scratch.resize(bytes);
  return scratch.data();
}

int product_threads(int64_t rows, int64_t n, int64_t k) {
  constexpr int64_t kParallelProduct = int64_t{1} << 22;
  return rows * n * k < kParallelProduct ? 1 : num_threads();
}

dnnl::memory::desc epilogue_output(int epilogue, int64_t m, int64_t n, int64_t ldc) {
  using dnnl::memory;
  return memory::desc({m, n},
                      epilogue & kBf16Output ? memory::data_type::bf16 : memory::data_type::f32,
                      memory::dims{ldc, 1});
}

dnnl::memory::desc epilogue_bias(int epilogue, int64_t n) {
  using dnnl::memory;
  return epilogue & kBias ? memory::desc({1, n}, memory::data_type::f32, memory::dims{n, 1})
                          : memory::desc();
}

std::shared_ptr<dnnl::memory> onednn_reordered(const dnnl::memory& source,
                                               const dnnl::memory::desc& layout) {
  auto out = std::make_shared<dnnl::memory>(layout, onednn_engine());
  dnnl::stream& stream = onednn_stream();
  // execute() takes its arguments by non-const reference; a reorder only reads its source.
  dnnl::reorder(source, *out).execute(stream, const_cast<dnnl::memory&>(source), *out);
  stream.wait();
  return out;
}

std::string onednn_isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    default:
      return "older than avx2";
  }
}

bool onednn_isa_has(dnnl::cpu_isa isa) {
  const auto have = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto want = static_cast<unsigned>(isa);
  return (have & want) == want;
}

}  // namespace transduce::ops
