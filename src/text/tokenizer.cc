#include "text/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "core/utf8.h"
#include "io/atomic_file.h"
#include "text/special_ids.h"

// Exported by libsentencepiece (the Python binding's set_random_generator_seed) but not declared
// in its public headers. A fixed seed makes sentence sampling, and so the vocabulary, repeatable.
namespace sentencepiece {
void SetRandomGeneratorSeed(unsigned int seed);
}

namespace transduce {
namespace {

static_assert(std::is_same_v<int, int32_t>, "SentencePiece ids are int");

constexpr uint64_t kDefaultMaxSentences = 10'000'000;
constexpr unsigned kSamplingSeed = 20170612;  // the paper's arXiv date

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

// Feeds the lines of several files to the trainer without loading them all: the same line rules
// as read_lines (CRLF, a leading UTF-8 BOM), and invalid UTF-8 stops training with path:line.
class FileLines : public sentencepiece::SentenceIterator {
 public:
  explicit FileLines(const std::vector<std::string>& files) : files_(files) { advance(); }
  ~FileLines() override {
    if (f_) std::fclose(f_);
    std::free(buf_);
  }
  FileLines(const FileLines&) = delete;
  FileLines& operator=(const FileLines&) = delete;

  bool done() const override { return done_; }
  void Next() override { advance(); }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override {
    if (error_.empty()) return sentencepiece::util::Status();
    return sentencepiece::util::Status(sentencepiece::util::StatusCode::kInvalidArgument, error_);
  }
  // Our own message, to rethrow as is (the trainer adds its own prefix to status()).
  const std::string& error() const { return error_; }
  int64_t lines() const { return lines_; }

 private:
  void stop(std::string message) {
    error_ = std::move(message);
    done_ = true;
    line_.clear();
  }

  void advance() {
    while (!done_) {
      if (!f_) {
        if (next_ == files_.size()) {
          done_ = true;
          line_.clear();
          return;
        }
        const std::string& path = files_[next_++];
        f_ = std::fopen(path.c_str(), "rb");
        if (!f_) return stop(fmt::format("{}: cannot open: {}", path, errno_message(errno)));
        line_number_ = 0;
      }
      const std::string& path = files_[next_ - 1];
      errno = 0;
      const ssize_t n = ::getline(&buf_, &cap_, f_);
      if (n < 0) {
        const bool failed = std::ferror(f_);
        const int e = errno;
        std::fclose(f_);
        f_ = nullptr;
        if (failed) return stop(fmt::format("{}: read failed: {}", path, errno_message(e)));
        continue;
      }
      std::string_view line(buf_, static_cast<size_t>(n));
      if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line_number_ == 0 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
      ++line_number_;
      ++lines_;
      size_t bad = 0;
      if (!valid_utf8(line, &bad))
        return stop(fmt::format("{}:{}: invalid UTF-8 at byte {}", path, line_number_, bad + 1));
      line_.assign(line);
      return;
    }
  }

  const std::vector<std::string>& files_;
  size_t next_ = 0;
  std::FILE* f_ = nullptr;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  int64_t line_number_ = 0;
  int64_t lines_ = 0;
  std::string line_;
  std::string error_;
  bool done_ = false;
};

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// SentencePiece's failures read "./src/file.cc(123) [condition] message": keep the message, and
// say what to do in our terms for the common ones (the size does not fit the text).
std::string explain(std::string message, int64_t lines) {
  if (message.starts_with("./") || message.starts_with("src/")) {
    const size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  auto number_after = [&](std::string_view key) -> long {
    const size_t at = message.find(key);
    return at == std::string::npos ? -1 : std::atol(message.c_str() + at + key.size());
  };
  if (message.find("too high") != std::string::npos) {
    const long most = number_after("<= ");
    if (most > 0) return fmt::format("the text yields at most {} pieces; use a smaller size", most);
  }
  if (message.find("smaller than required_chars") != std::string::npos) {
    const long least = number_after(" vs ");
    if (least > 0)
      return fmt::format(
          "the text has {} distinct characters, so the size must be at least {} (with the "
          "reserved ids)",
          least - 4, least);
  }
  if (lines == 0) return "the input is empty";
  return message;
}

}  // namespace

void Tokenizer::train(const std::vector<std::string>& input_files, int vocab_size,
                      const std::string& model_type, const std::string& out_prefix, int threads,
                      uint64_t max_sentences, const std::vector<std::string>& symbols) {
  if (input_files.empty()) fail("vocabulary training needs at least one input file");
  if (model_type != "bpe" && model_type != "unigram")
    fail("unknown vocabulary type '{}' (expected bpe or unigram)", model_type);
  // Four reserved ids plus at least a few pieces; SentencePiece checks the rest.
  if (vocab_size < 8) fail("vocabulary size {} is too small (at least 8)", vocab_size);
  if (out_prefix.empty()) fail("vocabulary training needs an output prefix");
  const uint64_t cap = max_sentences ? max_sentences : kDefaultMaxSentences;

  std::string symbol_list;
  for (const std::string& symbol : symbols) {
    if (symbol.empty() || symbol.find_first_of(", \t\n") != std::string::npos)
      fail("'{}' cannot be a vocabulary symbol (empty, or with a comma or a space)", symbol);
    symbol_list += (symbol_list.empty() ? "" : ",") + symbol;
  }
  std::unordered_map<std::string, std::string> args = {
      {"model_type", model_type},
      {"vocab_size", std::to_string(vocab_size)},
      {"character_coverage", "1.0"},
      {"pad_id", std::to_string(kPadId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      {"unk_id", std::to_string(kUnkId)},
      {"input_sentence_size", std::to_string(cap)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(threads > 0 ? threads : 1)},
      {"minloglevel", "2"},
  };
  if (!symbol_list.empty()) args["user_defined_symbols"] = symbol_list;
  sentencepiece::SetRandomGeneratorSeed(kSamplingSeed);
  FileLines lines(input_files);
  std::string serialized;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &serialized);
  if (!lines.error().empty()) fail("{}", lines.error());
  const std::string what = fmt::format("cannot train a {} vocabulary of size {} on {}", model_type,
                                       vocab_size, join(input_files));
  if (!status.ok()) fail("{}: {}", what, explain(status.message(), lines.lines()));
  if (lines.lines() == 0) fail("{}: the input is empty", what);

  sentencepiece::SentencePieceProcessor sp;
  const auto loaded = sp.LoadFromSerializedProto(serialized);
  if (!loaded.ok()) fail("{}: the trained model does not load: {}", what, loaded.message());
  if (sp.GetPieceSize() != vocab_size)
    fail("{}: the text only yields {} pieces; use a size of at most {}", what, sp.GetPieceSize(),
         sp.GetPieceSize());

  std::string vocab;
  for (int id = 0; id < sp.GetPieceSize(); ++id)
    vocab += fmt::format("{}\t{:g}\n", sp.IdToPiece(id), sp.GetScore(id));
  io::write_file_atomically(out_prefix + ".model", serialized);
  io::write_file_atomically(out_prefix + ".vocab", vocab);
}

Tokenizer::Tokenizer(const std::string& model_path)
    : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()), path_(model_path) {
  std::FILE* f = std::fopen(model_path.c_str(), "rb");
  if (!f) fail("{}: cannot open the vocabulary: {}", model_path, errno_message(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  const bool failed = std::ferror(f);
  const int e = errno;
  std::fclose(f);
  if (failed) fail("{}: cannot read the vocabulary: {}", model_path, errno_message(e));
  if (bytes.empty()) fail("{}: the vocabulary file is empty", model_path);
  sentencepiece::util::Status status;
  try {
    status = sp_->LoadFromSerializedProto(bytes);
  } catch (const std::exception& e) {
    // SentencePiece throws, rather than returning a status, for some corrupt models: darts_clone
    // on an empty piece ("failed to insert key: zero-length key"; found by fuzz/vocab_fuzz.cc).
    fail("{}: not a SentencePiece model (corrupt or wrong file): {}", model_path, e.what());
  }
  if (!status.ok())
    fail("{}: not a SentencePiece model (corrupt or wrong file): {}", model_path, status.message());
  if (sp_->GetPieceSize() <= kUnkId || sp_->pad_id() != kPadId || sp_->bos_id() != kBosId ||
      sp_->eos_id() != kEosId || sp_->unk_id() != kUnkId)
    fail(
        "{}: was not made by transduce vocab (reserved ids pad/bos/eos/unk are {}/{}/{}/{}, "
        "expected {}/{}/{}/{})",
        model_path, sp_->pad_id(), sp_->bos_id(), sp_->eos_id(), sp_->unk_id(), kPadId, kBosId,
        kEosId, kUnkId);
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) fail("{}: cannot encode text: {}", path_, status.message());
  return ids;
}

std::vector<int32_t> Tokenizer::sample_encode(std::string_view text, float alpha) const {
  std::vector<int32_t> ids;
  // nbest_size -1: sample from all segmentations (unigram); BPE ignores it and drops merges.
  const auto status = sp_->SampleEncode(text, -1, alpha, &ids);
  if (!status.ok()) fail("{}: cannot sample a segmentation: {}", path_, status.message());
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  const int size = sp_->GetPieceSize();
  std::vector<int32_t> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= size)
      fail("{}: id {} is outside the vocabulary (size {})", path_, id, size);
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  std::string text;
  const auto status = sp_->Decode(kept, &text);
  if (!status.ok()) fail("{}: cannot decode ids: {}", path_, status.message());
  return text;
}

int Tokenizer::vocab_size() const {
  return sp_->GetPieceSize();
}

std::string Tokenizer::piece(int32_t id) const {
  if (id < 0 || id >= sp_->GetPieceSize())
    fail("{}: id {} is outside the vocabulary (size {})", path_, id, sp_->GetPieceSize());
  return sp_->IdToPiece(id);
}

int32_t Tokenizer::piece_id(std::string_view piece) const {
  const int id = sp_->PieceToId(piece);
  if (id == kUnkId && piece != sp_->IdToPiece(kUnkId)) return -1;
  return id;
}

}  // namespace transduce
