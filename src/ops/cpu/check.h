// Shared argument checks for the CPU kernels.
#pragma once

#include <initializer_list>

#include "core/error.h"
#include "core/tensor.h"

namespace transduce::ops {

// Below this many elements (or multiply-adds) a parallel region costs more than it saves: waking
// and joining the thread team takes microseconds, and on a busy machine much longer.
inline bool parallel_worth_it(int64_t work) {
  return work >= (int64_t{1} << 15);
}

// Every given tensor lives on the CPU and is contiguous.
inline void require_cpu(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t->device() != Device::CPU)
      fail("this transduce build has no {} kernels (tensor of shape {})", device_name(t->device()),
           t->shape().str());
    TD_CHECK(t->is_contiguous(), "strided tensor {} given to a CPU kernel", t->shape().str());
  }
}

// The keys' padding mask (U8 [batch, lk], optional) as a pointer: null when undefined.
inline const uint8_t* key_pad_data(const Tensor& key_pad, int64_t batch, int64_t lk) {
  if (!key_pad.defined()) return nullptr;
  require_cpu({&key_pad});
  TD_CHECK(key_pad.numel() == batch * lk, "key_pad {} for batch {} keys {}", key_pad.shape().str(),
           batch, lk);
  return key_pad.u8();
}

}  // namespace transduce::ops
