// sacreBLEU's tokenizers and text handling. sacreBLEU's own tests give no tokenized strings, so
// the expected tokenizations here are worked by hand from its rules (tokenizer_13a.py with
// tokenizer_re.py, tokenizer_intl.py); the BLEU tests check the tokenizers again against
// sacreBLEU's published scores for each of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "metrics/tokenize.h"

namespace transduce::metrics {
namespace {

TEST(Tokenize13a, SplitsPunctuationOffWords) {
  // ',' after a non-digit and '!' (in the always-split ASCII set) become tokens.
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  // The apostrophe is not in the set: contractions stay whole (sacreBLEU users' own tests
  // agree: "I'm a student." -> I'm a student .).
  EXPECT_EQ(tokenize_13a("I'm a student."), "I'm a student .");
  EXPECT_EQ(tokenize_13a("state-of-the-art"), "state-of-the-art");
  EXPECT_EQ(tokenize_13a("(a) [b] {c} \"d\" a/b $5 50% #1 @x a+b=c a<b>c a;b:c? ~_^`|\\"),
            "( a ) [ b ] { c } \" d \" a / b $ 5 50 % # 1 @ x a + b = c a < b > c a ; b : c ? ~ _ "
            "^ ` | \\");
}

TEST(Tokenize13a, KeepsNumbersWhole) {
  // '.' and ',' between digits stay; a sentence-final period leaves even a number, thanks to the
  // space 13a pads the line with.
  EXPECT_EQ(tokenize_13a("1,000.5"), "1,000.5");
  EXPECT_EQ(tokenize_13a("It costs 3.5."), "It costs 3.5 .");
  EXPECT_EQ(tokenize_13a("in 2019."), "in 2019 .");
  // '-' splits only after a digit.
  EXPECT_EQ(tokenize_13a("1990-1995"), "1990 - 1995");
  EXPECT_EQ(tokenize_13a("-5 and x-5"), "-5 and x-5");
}

TEST(Tokenize13a, AbbreviationsLoseTheirPeriods) {
  // "U.S.": 'U' then '.' (non-digit, period) -> "U . ", the same for "S." -> "U . S .".
  EXPECT_EQ(tokenize_13a("the U.S. army"), "the U . S . army");
  EXPECT_EQ(tokenize_13a("e.g."), "e . g .");
  EXPECT_EQ(tokenize_13a("..."), ". . .");
}

TEST(Tokenize13a, UnescapesLikeMteval) {
  EXPECT_EQ(tokenize_13a("&quot;quoted&quot; &amp; &lt;tag&gt;"), "\" quoted \" & < tag >");
  // In mteval's order: &amp; first, so "&amp;lt;" ends as "<".
  EXPECT_EQ(tokenize_13a("a&amp;lt;b"), "a < b");
  EXPECT_EQ(tokenize_13a("a <skipped> b"), "a b");
  EXPECT_EQ(tokenize_13a("hyphen-\nated\nline"), "hyphenated line");
  // &apos; is not unescaped by 13a: its '&' and ';' split off.
  EXPECT_EQ(tokenize_13a("it&apos;s"), "it & apos ; s");
}

TEST(Tokenize13a, LeavesNonAsciiPunctuationAttached) {
  // 13a knows ASCII only: curly quotes, guillemets and the em dash stay where they are; the
  // ASCII comma and final period still split.
  EXPECT_EQ(tokenize_13a("“Hello,” she said — «bonjour»."), "“Hello , ” she said — «bonjour» .");
  EXPECT_EQ(tokenize_13a("Größe: 1.000,5 €"), "Größe : 1.000,5 €");
}

TEST(TokenizeIntl, SplitsUnicodePunctuationAndSymbols) {
  // Every P* character next to a non-number splits: “ ” , — « » . all become tokens.
  EXPECT_EQ(tokenize_intl("“Hello,” she said — «bonjour»."),
            "“ Hello , ” she said — « bonjour » .");
  // Symbols (S*) split on both sides, numbers keep their inner punctuation.
  EXPECT_EQ(tokenize_intl("Größe: 1.000,5 €"), "Größe : 1.000,5 €");
  EXPECT_EQ(tokenize_intl("a+b=c 5$ ©2020"), "a + b = c 5 $ © 2020");
  // The apostrophe is punctuation too (unlike 13a).
  EXPECT_EQ(tokenize_intl("It wasn't surprising."), "It wasn ' t surprising .");
  EXPECT_EQ(tokenize_intl("日本語、テスト。"), "日本語 、 テスト 。");
  EXPECT_EQ(tokenize_intl("¿Qué? ¡Sí!"), "¿ Qué ? ¡ Sí !");
}

TEST(TokenizeIntl, KeepsMtevalV14sFinalPeriodQuirk) {
  // A period after a digit at the very end is neither after a non-number nor before anything:
  // it stays attached, as in mteval-v14 (documented in sacreBLEU's tokenizer_intl.py).
  EXPECT_EQ(tokenize_intl("in 2019."), "in 2019.");
  EXPECT_EQ(tokenize_intl("in 2019. Then"), "in 2019 . Then");
  EXPECT_EQ(tokenize_intl("1,000.5"), "1,000.5");
}

TEST(TokenizeNone, LeavesTheLineAlone) {
  EXPECT_EQ(tokenize("Hello, world!", TokenizerKind::kNone), "Hello, world!");
  EXPECT_EQ(tokenize("Hello, world!", TokenizerKind::k13a), "Hello , world !");
  EXPECT_EQ(tokenizer_from_name("intl"), TokenizerKind::kIntl);
  EXPECT_EQ(tokenizer_name(TokenizerKind::k13a), "13a");
  EXPECT_THROW(tokenizer_from_name("zh"), Error);
}

TEST(TokenizeWhitespace, FollowsPythonStrSplit) {
  // Python's whitespace: ASCII space and controls, U+001C..U+001F, NBSP, the U+2000 spaces,
  // ideographic space; not the zero-width space U+200B.
  const std::vector<std::string_view> tokens = split_whitespace(
      "  a\tb\u00a0c\u3000d\x1c"
      "e\u2009f\u200bg \n");
  EXPECT_EQ(tokens, (std::vector<std::string_view>{"a", "b", "c", "d", "e", "f\u200bg"}));
  EXPECT_EQ(rstrip_whitespace("abc \u00a0\t\r"), "abc");
  EXPECT_EQ(rstrip_whitespace("  abc"), "  abc");
  EXPECT_EQ(remove_whitespace(" a b\u2003c "), "abc");
  EXPECT_EQ(normalize_whitespace("  a   b\u3000 c "), "a b c");
  EXPECT_TRUE(split_whitespace("").empty());
  EXPECT_TRUE(split_whitespace(" \t ").empty());
  // The 13a tokenizer splits on the same whitespace.
  EXPECT_EQ(tokenize_13a("a\u00a0b"), "a b");
}

TEST(TokenizeLowercase, IsUnicodeAware) {
  EXPECT_EQ(to_lower("Hello WORLD"), "hello world");
  EXPECT_EQ(to_lower("ÀÉÎÕÜ ÇØÅ ẞ"), "àéîõü çøå ß");
  EXPECT_EQ(to_lower("ПРИВЕТ Мир"), "привет мир");
  // Final sigma, as Python's str.lower(): word-final Σ becomes ς.
  EXPECT_EQ(to_lower("ΟΔΟΣ ΣΑΣ"), "οδος σας");
  // Dotted capital I lowercases to i + combining dot (U+0307), language-independently.
  EXPECT_EQ(to_lower("İ"), "i\u0307");
  EXPECT_EQ(to_lower("ǅ Ⅻ Ａ"), "ǆ ⅻ ａ");
  EXPECT_EQ(to_lower(""), "");
}

TEST(TokenizeUtf8, RoundTripsCodePoints) {
  const std::string s = "aé€😀";
  const std::u32string cps = decode_utf8(s);
  EXPECT_EQ(cps, (std::u32string{U'a', U'é', U'€', U'😀'}));
  std::string back;
  for (char32_t c : cps) append_utf8(back, c);
  EXPECT_EQ(back, s);
  EXPECT_EQ(decode_utf8("a\xff"), (std::u32string{U'a', 0xFFFD}));
}

}  // namespace
}  // namespace transduce::metrics
