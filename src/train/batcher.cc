#include "train/batcher.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

// Stream id of the batcher's random numbers under hash_u64, apart from dropout's.
constexpr uint64_t kBatcherStream = 0xBA7C4E5ull;

// Fisher-Yates with SplitMix64, identical on every standard library.
template <typename T>
void shuffle(std::vector<T>& v, SplitMix64& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng.next() % static_cast<uint64_t>(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace

Batcher::Batcher(const std::vector<Example>* examples, BatcherOptions options)
    : examples_(examples), options_(options) {
  if (examples_ == nullptr || examples_->empty()) fail("batcher: no examples to batch");
  if (options_.batch_tokens <= 0)
    fail("batcher: batch_tokens must be positive, got {}", options_.batch_tokens);
}

std::vector<std::vector<int64_t>> Batcher::epoch_plan(int64_t epoch) const {
  const std::vector<Example>& data = *examples_;
  const int64_t n = static_cast<int64_t>(data.size());
  SplitMix64 rng(hash_u64(options_.seed, kBatcherStream, static_cast<uint64_t>(epoch)));

  struct Key {
    int64_t longest, tgt, src;
    bool operator<(const Key& o) const {
      if (longest != o.longest) return longest < o.longest;
      if (tgt != o.tgt) return tgt < o.tgt;
      return src < o.src;
    }
  };
  std::vector<Key> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = source_length(data[static_cast<size_t>(i)]);
    const int64_t t = target_length(data[static_cast<size_t>(i)]);
    keys[static_cast<size_t>(i)] = Key{std::max(s, t), t, s};
  }

  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  shuffle(order, rng);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)];
  });

  const int64_t budget = options_.batch_tokens;
  std::vector<std::vector<int64_t>> plan;
  std::vector<int64_t> current;
  int64_t max_src = 0, max_tgt = 0;
  for (int64_t i : order) {
    const Key& k = keys[static_cast<size_t>(i)];
    const int64_t s = std::max(max_src, k.src), t = std::max(max_tgt, k.tgt);
    const int64_t count = static_cast<int64_t>(current.size()) + 1;
    if (!current.empty() && (count * s > budget || count * t > budget)) {
      plan.push_back(std::move(current));
      current.clear();
      max_src = max_tgt = 0;
    }
    current.push_back(i);
    max_src = std::max(max_src, k.src);
    max_tgt = std::max(max_tgt, k.tgt);
  }
  if (!current.empty()) plan.push_back(std::move(current));

  shuffle(plan, rng);
  return plan;
}

Batch Batcher::make_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) fail("batcher: cannot make an empty batch");
  const std::vector<Example>& data = *examples_;
  int64_t ls = 0, lt = 0;
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(data.size()))
      fail("batcher: example index {} out of range [0, {})", i, data.size());
    ls = std::max(ls, source_length(data[static_cast<size_t>(i)]));
    lt = std::max(lt, target_length(data[static_cast<size_t>(i)]));
  }
  const int64_t b = static_cast<int64_t>(indices.size());
  Batch batch;
  batch.src = Tensor::empty({b, ls}, DType::I32);
  batch.tgt_in = Tensor::empty({b, lt}, DType::I32);
  batch.tgt_out = Tensor::empty({b, lt}, DType::I32);
  int32_t* src = batch.src.i32();
  int32_t* tgt_in = batch.tgt_in.i32();
  int32_t* tgt_out = batch.tgt_out.i32();
  std::fill(src, src + b * ls, kPadId);
  std::fill(tgt_in, tgt_in + b * lt, kPadId);
  std::fill(tgt_out, tgt_out + b * lt, kPadId);
  for (int64_t r = 0; r < b; ++r) {
    const Example& e = data[static_cast<size_t>(indices[static_cast<size_t>(r)])];
    int32_t* srow = src + r * ls;
    std::copy(e.src.begin(), e.src.end(), srow);
    srow[e.src.size()] = kEosId;
    int32_t* in_row = tgt_in + r * lt;
    int32_t* out_row = tgt_out + r * lt;
    in_row[0] = kBosId;
    std::copy(e.tgt.begin(), e.tgt.end(), in_row + 1);
    std::copy(e.tgt.begin(), e.tgt.end(), out_row);
    out_row[e.tgt.size()] = kEosId;
  }
  return batch;
}

}  // namespace transduce
