#include "text/subword_sampler.h"

#include <sentencepiece_processor.h>

#include <exception>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "text/corpus.h"
#include "text/tokenizer.h"

namespace transduce {

SubwordSampler::SubwordSampler(const Tokenizer& tok, std::vector<std::string> src,
                               std::vector<std::string> tgt, int max_len, float alpha,
                               uint64_t seed)
    : tok_(tok),
      src_(std::move(src)),
      tgt_(std::move(tgt)),
      max_len_(max_len),
      alpha_(alpha),
      seed_(seed) {
  if (!(alpha > 0 && alpha < 1))
    fail("--subword-sampling must be between 0 and 1 (exclusive), got {}", alpha);
  TD_CHECK(src_.size() == tgt_.size(), "{} source lines but {} target lines", src_.size(),
           tgt_.size());
}

void SubwordSampler::encode_epoch(int64_t epoch, std::vector<Example>& examples) const {
  examples.resize(src_.size());
  auto side = [&](const std::string& text) {
    std::vector<int32_t> ids = tok_.sample_encode(text, alpha_);
    return fits_max_len(ids.size(), max_len_) ? ids : tok_.encode(text);
  };
  // SentencePiece draws from a generator of each thread, seeded from its global seed when the
  // thread first draws. A fresh thread per epoch, started after the seed is set and joined before
  // anything else can set it, makes the draws depend on (seed, epoch) alone. One thread encodes
  // the whole epoch: about a second for Multi30k's 29,000 pairs, a few percent of an epoch.
  uint32_t epoch_seed =
      static_cast<uint32_t>(hash_u64(seed_, 0x5eed5a3b1e, static_cast<uint64_t>(epoch)));
  if (epoch_seed == ~0u) epoch_seed = 0;  // SentencePiece reads ~0u as "seed from the clock"
  sentencepiece::SetRandomGeneratorSeed(epoch_seed);
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      for (size_t i = 0; i < src_.size(); ++i) {
        examples[i].src = side(src_[i]);
        examples[i].tgt = side(tgt_[i]);
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace transduce
