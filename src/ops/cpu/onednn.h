// What oneDNN's products (gemm_bf16.cc, gemm_int8.cc) share: the CPU engine, each thread's
// stream and scratchpad, and the instruction set oneDNN runs on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

namespace transduce::ops {

dnnl::engine& onednn_engine();
// The calling thread's stream: several threads may run products at once.
dnnl::stream& onednn_stream();
// The calling thread's scratchpad, at least `bytes` long (primitives are made with a user
// scratchpad, so that a cached primitive holds no per-call memory).
void* onednn_scratchpad(size_t bytes);
// oneDNN's name for the instruction set it found (after ONEDNN_MAX_CPU_ISA), e.g.
// "avx512_core_amx".
std::string onednn_isa_name();
// Whether oneDNN's instruction set includes all of `isa` (its values nest: AMX includes
// AVX512-BF16, which includes AVX512-VNNI).
bool onednn_isa_has(dnnl::cpu_isa isa);

// The threads a product of rows x n x k runs on: below 2^22 multiply-adds the calling thread
// alone, since waking the team costs more than it saves (measured in the service, where clients
// share the cores); else num_threads().
int product_threads(int64_t rows, int64_t n, int64_t k);

// What a matmul primitive does after its sums (beyond alpha and beta): bits of these.
enum ProductEpilogue : int { kPlain = 0, kBias = 1, kRelu = 2, kBf16Output = 4 };
// The output C [m, n] (rows ldc apart): F32, or BF16 with kBf16Output.
dnnl::memory::desc epilogue_output(int epilogue, int64_t m, int64_t n, int64_t ldc);
// The F32 bias [1, n] with kBias, else an empty descriptor (no bias).
dnnl::memory::desc epilogue_bias(int epilogue, int64_t n);

// `source`'s values in `layout`, in memory of their own (a weight matrix reordered once into
// the blocked layout a product asks for).
std::shared_ptr<dnnl::memory> onednn_reordered(const dnnl::memory& source,
                                               const dnnl::memory::desc& layout);

// Values made once per key and kept, for any thread: making a oneDNN primitive costs far more
// than a small product. References stay valid (std::map never moves its nodes).
template <class Key, class Value>
class OnceCache {
 public:
  template <class Make>
  const Value& get(const Key& key, Make make) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end()) it = values_.emplace(key, make()).first;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::map<Key, Value> values_;
};

}  // namespace transduce::ops
