// What oneDNN's products (gemm_bf16.cc, gemm_int8.cc) share: the CPU engine, each thread's
// stream and scratchpad, and the instruction set oneDNN runs on.
#pragma once

#include <map>
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
