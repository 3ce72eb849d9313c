// The shared SentencePiece vocabulary: training (BPE and unigram), the reserved ids, encode/decode,
// bad models and bad training input, and encode_parallel's filtering.
#include "text/tokenizer.h"

#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/error_of.h"
#include "support/file_text.h"
#include "support/shared_data.h"
#include "text/corpus.h"
#include "text/example.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

std::string make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "transduce_tokenizer_XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed";
  return tmpl;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Deterministic made-up bilingual-looking text, single spaces, characters NFKC leaves alone.
std::vector<std::string> generated_sentences(int n, uint32_t seed) {
  static const char* const kWords[] = {
      "the",      "a",      "man",     "woman",   "dog",     "runs",  "jumps", "over",
      "street",   "Straße", "Müller",  "café",    "naïve",   "Grüße", "über",  "schön",
      "Köln",     "red",    "blue",    "green",   "playing", "water", "beach", "children",
      "ελληνικά", "日本語", "walking", "through", "park",    "with",  "his",   "her",
      "Mädchen",  "Junge",  "spielt",  "im",      "Wasser",  "zwei",  "drei",  "and"};
  constexpr int kCount = sizeof(kWords) / sizeof(kWords[0]);
  std::vector<std::string> out;
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int i = 0; i < n; ++i) {
    const int len = 3 + static_cast<int>(next() % 10);
    std::string s;
    for (int w = 0; w < len; ++w) {
      if (w) s += ' ';
      s += kWords[next() % kCount];
    }
    s += (next() % 3 == 0) ? "." : (next() % 2 ? "!" : "?");
    out.push_back(s);
  }
  return out;
}

std::string collapse_whitespace(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

using testing::error_of;

void expect_reserved_ids(const Tokenizer& tok) {
  EXPECT_EQ(tok.piece(kPadId), "<pad>");
  EXPECT_EQ(tok.piece(kBosId), "<s>");
  EXPECT_EQ(tok.piece(kEosId), "</s>");
  EXPECT_EQ(tok.piece(kUnkId), "<unk>");
}

void expect_round_trips(const Tokenizer& tok, const std::vector<std::string>& sentences) {
  for (const std::string& s : sentences) {
    const std::vector<int32_t> ids = tok.encode(s);
    ASSERT_FALSE(ids.empty()) << s;
    for (int32_t id : ids) {
      ASSERT_GE(id, kUnkId) << s;  // never PAD, BOS or EOS
      ASSERT_LT(id, tok.vocab_size()) << s;
      ASSERT_NE(id, kUnkId) << "unknown piece in a training sentence: " << s;
    }
    EXPECT_EQ(collapse_whitespace(tok.decode(ids)), collapse_whitespace(s));
  }
}

// One BPE vocabulary trained on generated text, shared by the tests below.
class GeneratedVocab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_temp_dir());
    en_ = new std::vector<std::string>(generated_sentences(300, 1));
    de_ = new std::vector<std::string>(generated_sentences(300, 2));
    write_file(*dir_ + "/train.en", join_lines(*en_));
    write_file(*dir_ + "/train.de", join_lines(*de_));
    Tokenizer::train({*dir_ + "/train.en", *dir_ + "/train.de"}, kSize, "bpe", *dir_ + "/bpe", 2);
    tok_ = new Tokenizer(*dir_ + "/bpe.model");
  }
  static void TearDownTestSuite() {
    delete tok_;
    fs::remove_all(*dir_);
    delete dir_;
    delete en_;
    delete de_;
  }

  static constexpr int kSize = 200;
  static std::string* dir_;
  static std::vector<std::string>* en_;
  static std::vector<std::string>* de_;
  static Tokenizer* tok_;
};
std::string* GeneratedVocab::dir_ = nullptr;
std::vector<std::string>* GeneratedVocab::en_ = nullptr;
std::vector<std::string>* GeneratedVocab::de_ = nullptr;
Tokenizer* GeneratedVocab::tok_ = nullptr;

TEST_F(GeneratedVocab, HasTheRequestedSizeAndReservedIds) {
  EXPECT_EQ(tok_->vocab_size(), kSize);
  expect_reserved_ids(*tok_);
  EXPECT_EQ(tok_->path(), *dir_ + "/bpe.model");
  // The listing next to the model: one "piece<TAB>score" line per id.
  const std::string vocab = read_file(*dir_ + "/bpe.vocab");
  EXPECT_EQ(std::count(vocab.begin(), vocab.end(), '\n'), kSize);
  EXPECT_EQ(vocab.substr(0, 6), "<pad>\t");
}

TEST_F(GeneratedVocab, EncodeDecodeRoundTrips) {
  expect_round_trips(*tok_, *en_);
  expect_round_trips(*tok_, *de_);
  EXPECT_TRUE(tok_->encode("").empty());
  EXPECT_EQ(tok_->decode({}), "");
}

TEST_F(GeneratedVocab, DecodeIgnoresPadBosEos) {
  std::vector<int32_t> ids = tok_->encode("the dog runs over the street.");
  std::vector<int32_t> wrapped = {kBosId};
  wrapped.insert(wrapped.end(), ids.begin(), ids.end());
  wrapped.insert(wrapped.end(), {kEosId, kPadId, kPadId});
  EXPECT_EQ(tok_->decode(wrapped), "the dog runs over the street.");
}

TEST_F(GeneratedVocab, UnknownCharactersBecomeUnk) {
  const std::vector<int32_t> ids = tok_->encode("the \xE2\x98\x83 dog");  // a snowman
  EXPECT_NE(std::find(ids.begin(), ids.end(), kUnkId), ids.end());
  for (int32_t id : ids) EXPECT_GT(id, kEosId);
}

TEST_F(GeneratedVocab, IdsOutsideTheVocabularyAreErrors) {
  EXPECT_THROW(tok_->piece(kSize), Error);
  EXPECT_THROW(tok_->piece(-1), Error);
  EXPECT_THROW(tok_->decode({5, kSize}), Error);
}

TEST_F(GeneratedVocab, TrainingIsRepeatable) {
  // Same input, another thread count: the same pieces in the same order.
  Tokenizer::train({*dir_ + "/train.en", *dir_ + "/train.de"}, kSize, "bpe", *dir_ + "/again", 1);
  const std::string again = read_file(*dir_ + "/again.vocab");
  EXPECT_TRUE(again == read_file(*dir_ + "/bpe.vocab"));
}

TEST_F(GeneratedVocab, UnigramAlsoTrains) {
  Tokenizer::train({*dir_ + "/train.en", *dir_ + "/train.de"}, 80, "unigram", *dir_ + "/uni", 2);
  const Tokenizer uni(*dir_ + "/uni.model");
  EXPECT_EQ(uni.vocab_size(), 80);
  expect_reserved_ids(uni);
  expect_round_trips(uni, {en_->begin(), en_->begin() + 50});
}

TEST_F(GeneratedVocab, TrainingErrorsAreOneClearLineAndWriteNothing) {
  const std::vector<std::string> inputs = {*dir_ + "/train.en", *dir_ + "/train.de"};
  std::string message =
      error_of([&] { Tokenizer::train(inputs, 90000, "bpe", *dir_ + "/big", 1); });
  EXPECT_NE(message.find("smaller size"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(*dir_ + "/big.model"));

  message = error_of([&] { Tokenizer::train(inputs, 20, "bpe", *dir_ + "/tiny", 1); });
  EXPECT_NE(message.find("at least"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(*dir_ + "/tiny.model"));

  message = error_of([&] { Tokenizer::train(inputs, 200, "wordpiece", *dir_ + "/wp", 1); });
  EXPECT_NE(message.find("wordpiece"), std::string::npos) << message;

  const std::string missing = *dir_ + "/missing.txt";
  message = error_of([&] { Tokenizer::train({missing}, 200, "bpe", *dir_ + "/m", 1); });
  EXPECT_NE(message.find(missing), std::string::npos) << message;

  const std::string bad = *dir_ + "/bad.txt";
  write_file(bad, "good line\nbad \xC0\xAF line\n");
  message = error_of([&] { Tokenizer::train({inputs[0], bad}, 200, "bpe", *dir_ + "/b", 1); });
  EXPECT_EQ(message, bad + ":2: invalid UTF-8 at byte 5");
  EXPECT_FALSE(fs::exists(*dir_ + "/b.model"));
}

TEST_F(GeneratedVocab, EncodeParallelSkipsAndCountsEmptyAndLongPairs) {
  ParallelText text;
  const std::string long_line = "the man runs over the street with his dog and the children";
  const int long_tokens = static_cast<int>(tok_->encode(long_line).size());
  const int max_len = long_tokens;  // long_tokens + EOS > max_len: too long
  text.src = {"a dog.", "", "the woman", long_line, "  \t ", "zwei Mädchen", "red", "blue"};
  text.tgt = {"ein Hund.", "nothing", " ", "short", "x", "two girls", long_line, "blau"};
  ASSERT_LT(static_cast<int>(tok_->encode("zwei Mädchen").size()) + 1, max_len);
  EncodeStats stats;
  const std::vector<Example> out = encode_parallel(text, *tok_, max_len, &stats);
  EXPECT_EQ(stats.pairs, 8);
  EXPECT_EQ(stats.kept, 3);
  EXPECT_EQ(stats.skipped_empty, 3);
  EXPECT_EQ(stats.skipped_long, 2);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].src, tok_->encode("a dog."));
  EXPECT_EQ(out[0].tgt, tok_->encode("ein Hund."));
  EXPECT_EQ(out[1].src, tok_->encode("zwei Mädchen"));
  EXPECT_EQ(out[2].tgt, tok_->encode("blau"));

  // max_len counts EOS: a side of n subword tokens fits exactly when max_len is n + 1.
  ParallelText one;
  one.src = {long_line};
  one.tgt = {"a"};
  EXPECT_EQ(encode_parallel(one, *tok_, long_tokens + 1, &stats).size(), 1u);
  EXPECT_EQ(encode_parallel(one, *tok_, long_tokens, &stats).size(), 0u);
  EXPECT_EQ(stats.skipped_long, 1);
  EXPECT_EQ(encode_parallel(one, *tok_, 0, nullptr).size(), 1u);  // 0: no limit
}

TEST_F(GeneratedVocab, EncodeParallelKeepsOrderOnManyLines) {
  ParallelText text;
  text.src = *en_;
  text.tgt = *de_;
  for (int i = 0; i < 40; ++i) {
    text.src.insert(text.src.end(), en_->begin(), en_->end());
    text.tgt.insert(text.tgt.end(), de_->begin(), de_->end());
  }
  EncodeStats stats;
  const std::vector<Example> out = encode_parallel(text, *tok_, 1000, &stats);
  ASSERT_EQ(out.size(), text.src.size());
  EXPECT_EQ(stats.kept, static_cast<int64_t>(text.src.size()));
  for (size_t i = 0; i < out.size(); i += 97) {
    EXPECT_EQ(out[i].src, tok_->encode(text.src[i])) << i;
    EXPECT_EQ(out[i].tgt, tok_->encode(text.tgt[i])) << i;
  }
}

TEST_F(GeneratedVocab, BadModelFilesAreRefusedByName) {
  const std::string missing = *dir_ + "/nope.model";
  std::string message = error_of([&] { Tokenizer t(missing); });
  EXPECT_NE(message.find(missing), std::string::npos) << message;

  const std::string text = *dir_ + "/text.model";
  write_file(text, "this is not a SentencePiece model\n");
  message = error_of([&] { Tokenizer t(text); });
  EXPECT_NE(message.find(text), std::string::npos) << message;

  const std::string model = read_file(*dir_ + "/bpe.model");
  const std::string cut = *dir_ + "/cut.model";
  write_file(cut, model.substr(0, model.size() / 2));
  message = error_of([&] { Tokenizer t(cut); });
  EXPECT_NE(message.find(cut), std::string::npos) << message;

  const std::string empty = *dir_ + "/empty.model";
  write_file(empty, "");
  message = error_of([&] { Tokenizer t(empty); });
  EXPECT_NE(message.find(empty), std::string::npos) << message;
}

TEST_F(GeneratedVocab, ModelsWithOtherReservedIdsAreRefused) {
  // SentencePiece's defaults: unk 0, bos 1, eos 2, no pad.
  const std::string prefix = *dir_ + "/foreign";
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + *dir_ + "/train.en --model_prefix=" + prefix +
      " --vocab_size=120 --model_type=bpe --minloglevel=2");
  ASSERT_TRUE(status.ok()) << status.message();
  const std::string message = error_of([&] { Tokenizer t(prefix + ".model"); });
  EXPECT_NE(message.find(prefix + ".model"), std::string::npos) << message;
  EXPECT_NE(message.find("was not made by transduce vocab"), std::string::npos) << message;
}

// Real text: the first 2000 lines of Multi30k's English and German training data.
TEST(RealTextVocab, Multi30kBpe) {
  const std::string dir = make_temp_dir();
  std::vector<std::string> inputs;
  std::vector<std::string> sample;
  for (const char* lang : {"en", "de"}) {
    std::vector<std::string> lines =
        read_lines(testing::shared_data_file(std::string("multi30k/train.") + lang));
    lines.resize(std::min<size_t>(lines.size(), 2000));
    inputs.push_back(dir + "/head." + lang);
    write_file(inputs.back(), join_lines(lines));
    sample.insert(sample.end(), lines.begin(), lines.begin() + std::min<size_t>(lines.size(), 200));
  }
  Tokenizer::train(inputs, 200, "bpe", dir + "/spm", 2);
  const Tokenizer tok(dir + "/spm.model");
  EXPECT_EQ(tok.vocab_size(), 200);
  expect_reserved_ids(tok);
  expect_round_trips(tok, sample);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace transduce
