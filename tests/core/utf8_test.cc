// The UTF-8 validator: RFC 3629 well-formedness, and the offset of the first bad sequence.
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace transduce {
namespace {

size_t bad_at(const std::string& s) {
  size_t at = 12345;
  EXPECT_FALSE(valid_utf8(s, &at)) << s;
  return at;
}

TEST(Utf8, AcceptsAsciiAndEmpty) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("A man in an orange hat."));
  EXPECT_TRUE(valid_utf8(std::string("nul\0inside", 10)));
}

TEST(Utf8, AcceptsMultiByteSequences) {
  EXPECT_TRUE(
      valid_utf8("Stra\xC3\x9F"
                 "e"));                                 // ß, 2 bytes
  EXPECT_TRUE(valid_utf8("\xE2\x82\xAC 5"));            // €, 3 bytes
  EXPECT_TRUE(valid_utf8("\xF0\x9D\x84\x9E clef"));     // U+1D11E, 4 bytes
  EXPECT_TRUE(valid_utf8("\xC2\x80"));                  // U+0080, smallest 2-byte
  EXPECT_TRUE(valid_utf8("\xE0\xA0\x80"));              // U+0800, smallest 3-byte
  EXPECT_TRUE(valid_utf8("\xF0\x90\x80\x80"));          // U+10000, smallest 4-byte
  EXPECT_TRUE(valid_utf8("\xED\x9F\xBF\xEE\x80\x80"));  // U+D7FF, U+E000 around surrogates
  EXPECT_TRUE(valid_utf8("\xF4\x8F\xBF\xBF"));          // U+10FFFF, the largest
  EXPECT_TRUE(valid_utf8("Grüße aus Köln, 日本語, Ελληνικά and a long ASCII tail"));
}

TEST(Utf8, RejectsOverlongForms) {
  EXPECT_EQ(bad_at("\xC0\x80"), 0u);           // NUL in 2 bytes
  EXPECT_EQ(bad_at("ab\xC1\xBF"), 2u);         // '\x7f' in 2 bytes
  EXPECT_EQ(bad_at("\xE0\x80\x80"), 0u);       // 3-byte NUL
  EXPECT_EQ(bad_at("\xE0\x9F\xBF"), 0u);       // U+07FF in 3 bytes
  EXPECT_EQ(bad_at("\xF0\x80\x80\x80"), 0u);   // 4-byte NUL
  EXPECT_EQ(bad_at("x\xF0\x8F\xBF\xBF"), 1u);  // U+FFFF in 4 bytes
}

TEST(Utf8, RejectsSurrogates) {
  EXPECT_EQ(bad_at("\xED\xA0\x80"), 0u);              // U+D800
  EXPECT_EQ(bad_at("ok \xED\xBF\xBF"), 3u);           // U+DFFF
  EXPECT_EQ(bad_at("\xED\xA0\xBD\xED\xB8\x80"), 0u);  // CESU-8 pair
}

TEST(Utf8, RejectsCodePointsAboveTheMaximum) {
  EXPECT_EQ(bad_at("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(bad_at("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(bad_at("\xF8\x88\x80\x80\x80"), 0u);  // old 5-byte form
  EXPECT_EQ(bad_at("a\xFF"), 1u);
  EXPECT_EQ(bad_at("\xFE"), 0u);
}

TEST(Utf8, RejectsTruncatedSequencesAndStrayContinuations) {
  EXPECT_EQ(bad_at("ab\xE2\x82"), 2u);  // € cut at the end
  EXPECT_EQ(bad_at("\xC3"), 0u);
  EXPECT_EQ(bad_at("\xF0\x9D\x84"), 0u);
  EXPECT_EQ(bad_at("\xE2\x82"
                   "A"),
            0u);  // cut in the middle
  EXPECT_EQ(bad_at("\xF0\x9D\x84 x"), 0u);
  EXPECT_EQ(bad_at("\x80"), 0u);
  EXPECT_EQ(bad_at("\xC3\xA9\xA9"), 2u);  // one continuation too many
}

TEST(Utf8, ReportsTheOffsetAfterALongAsciiRun) {
  std::string s(37, 'a');
  s += "\xC3\xA9\xE2\x82\xAC";  // valid
  s += std::string(11, 'b');
  const size_t expected = s.size();
  s += "\xED\xA0\x80 tail tail tail";
  EXPECT_EQ(bad_at(s), expected);
  EXPECT_TRUE(valid_utf8(std::string(1000, 'z')));
  EXPECT_TRUE(valid_utf8(s.substr(0, expected)));
}

TEST(Utf8, NullOffsetIsAllowed) {
  EXPECT_FALSE(valid_utf8("\xC0\x80", nullptr));
}

}  // namespace
}  // namespace transduce
