// The shared subword vocabulary (SentencePiece) for source and target text.
//
// A transduce vocabulary is a SentencePiece model trained with the reserved ids of
// text/special_ids.h: PAD 0, BOS 1, EOS 2, UNK 3. encode() never adds BOS/EOS (the batcher does).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace transduce {

class Tokenizer {
 public:
  // Trains one model over all `input_files` (source and target text together) and writes
  // `<out_prefix>.model` and `<out_prefix>.vocab` (each atomically; the vocabulary is checked
  // before anything is written). `model_type` is "bpe" or "unigram". At most `max_sentences`
  // lines are sampled (shuffled) from the input; 0 means the default cap of 10 million.
  // Lines are read like read_lines (CRLF and a UTF-8 BOM are accepted); invalid UTF-8 fails with
  // "path:line: ...". Errors (including a vocabulary size the data cannot fill) throw
  // transduce::Error with one line. Sampling uses a fixed seed, so the same input gives the
  // same vocabulary.
  // `symbols` become pieces of their own, never split or merged with the text around them (the
  // brackets of linearised trees); they count in vocab_size and may not contain ',' or spaces.
  static void train(const std::vector<std::string>& input_files, int vocab_size,
                    const std::string& model_type, const std::string& out_prefix, int threads,
                    uint64_t max_sentences = 0, const std::vector<std::string>& symbols = {});

  // Loads a model made by train(). A missing or corrupt file, or a SentencePiece model with
  // other reserved ids, throws transduce::Error naming the file.
  explicit Tokenizer(const std::string& model_path);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Subword ids of `text`, without BOS/EOS. Thread-safe (const).
  std::vector<int32_t> encode(std::string_view text) const;
  // One segmentation of `text` drawn at random (subword regularisation): for a BPE vocabulary
  // each merge is skipped with probability `alpha` (BPE-dropout; 0 gives encode()'s ids), for a
  // unigram one a segmentation is sampled from the lattice with smoothing `alpha`. The draws come
  // from SentencePiece's generator of the calling thread (text/subword_sampler.h makes them
  // reproducible). Thread-safe (const).
  std::vector<int32_t> sample_encode(std::string_view text, float alpha) const;
  // Text of `ids`; PAD, BOS and EOS are skipped. An id outside [0, vocab_size()) throws.
  std::string decode(const std::vector<int32_t>& ids) const;
  int vocab_size() const;
  // The piece of `id` (e.g. "▁the", "<unk>"). An id outside [0, vocab_size()) throws.
  std::string piece(int32_t id) const;
  // The id of a piece, or -1 when the vocabulary does not have it.
  int32_t piece_id(std::string_view piece) const;
  const std::string& path() const { return path_; }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string path_;
};

}  // namespace transduce
