// Reading corpora: line ends, empty files, missing files, invalid UTF-8, parallel line counts.
#include "text/corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/error_of.h"

namespace transduce {
namespace {

using testing::error_of;

namespace fs = std::filesystem;

class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_corpus_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path;
  }

  std::string dir_;
};

using Lines = std::vector<std::string>;

TEST_F(CorpusTest, ReadsLfFiles) {
  EXPECT_EQ(read_lines(write("a.txt", "one\ntwo words\n\nfour\n")),
            (Lines{"one", "two words", "", "four"}));
}

TEST_F(CorpusTest, ReadsCrlfFiles) {
  EXPECT_EQ(read_lines(write("a.txt", "one\r\ntwo\r\n\r\nfour\r\n")),
            (Lines{"one", "two", "", "four"}));
  // Only the '\r' of a line end goes; one inside a line stays.
  EXPECT_EQ(read_lines(write("b.txt", "a\rb\r\n")), (Lines{"a\rb"}));
}

TEST_F(CorpusTest, AFinalLineWithoutNewlineCounts) {
  EXPECT_EQ(read_lines(write("a.txt", "one\ntwo")), (Lines{"one", "two"}));
  EXPECT_EQ(read_lines(write("b.txt", "only")), (Lines{"only"}));
  EXPECT_EQ(read_lines(write("c.txt", "crlf\r\nlast\r")), (Lines{"crlf", "last"}));
}

TEST_F(CorpusTest, EmptyFileHasNoLines) {
  EXPECT_TRUE(read_lines(write("empty.txt", "")).empty());
  EXPECT_EQ(read_lines(write("newline.txt", "\n")), (Lines{""}));
}

TEST_F(CorpusTest, DropsAByteOrderMark) {
  EXPECT_EQ(read_lines(write("bom.txt",
                             "\xEF\xBB\xBFGr\xC3\xBC\xC3\x9F"
                             "e\n")),
            (Lines{"Gr\xC3\xBC\xC3\x9F"
                   "e"}));
}

TEST_F(CorpusTest, KeepsUtf8Text) {
  EXPECT_EQ(read_lines(write("de.txt", "Ein Mann mit einem orangefarbenen Hut.\nZwei Männer.\n")),
            (Lines{"Ein Mann mit einem orangefarbenen Hut.", "Zwei Männer."}));
}

TEST_F(CorpusTest, MissingFileIsNamed) {
  const std::string path = dir_ + "/no_such_file.en";
  const std::string message = error_of([&] { read_lines(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST_F(CorpusTest, DirectoryIsAnError) {
  const std::string message = error_of([&] { read_lines(dir_); });
  EXPECT_NE(message.find(dir_), std::string::npos) << message;
}

TEST_F(CorpusTest, InvalidUtf8NamesFileLineAndByte) {
  const std::string path = write("bad.txt", "fine\nalso fine\r\nabc\xC3(d\nmore\n");
  const std::string message = error_of([&] { read_lines(path); });
  EXPECT_EQ(message, path + ":3: invalid UTF-8 at byte 4");
  // Surrogates and overlong forms count as invalid too.
  const std::string surrogate = write("s.txt", "\xED\xA0\x80\n");
  EXPECT_EQ(error_of([&] { read_lines(surrogate); }), surrogate + ":1: invalid UTF-8 at byte 1");
  const std::string truncated = write("t.txt", "ok\nend\xE2\x82");
  EXPECT_EQ(error_of([&] { read_lines(truncated); }), truncated + ":2: invalid UTF-8 at byte 4");
}

TEST_F(CorpusTest, ReadsParallelText) {
  const std::string src = write("train.en", "A dog.\nTwo cats.\n");
  const std::string tgt = write("train.de", "Ein Hund.\nZwei Katzen.");
  const ParallelText text = read_parallel(src, tgt);
  EXPECT_EQ(text.src, (Lines{"A dog.", "Two cats."}));
  EXPECT_EQ(text.tgt, (Lines{"Ein Hund.", "Zwei Katzen."}));
  EXPECT_EQ(text.src_path, src);
  EXPECT_EQ(text.tgt_path, tgt);
}

TEST_F(CorpusTest, ParallelLineCountMismatchNamesBothFilesAndCounts) {
  const std::string src = write("train.en", "a\nb\nc\n");
  const std::string tgt = write("train.de", "a\nb\n");
  const std::string message = error_of([&] { read_parallel(src, tgt); });
  EXPECT_NE(message.find(src + " has 3 lines"), std::string::npos) << message;
  EXPECT_NE(message.find(tgt + " has 2"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace transduce
