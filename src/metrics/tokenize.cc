#include "metrics/tokenize.h"

#include <unicode/ucasemap.h>
#include <unicode/uchar.h>
#include <unicode/utypes.h>

#include <memory>

#include "core/error.h"

namespace transduce::metrics {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes the code point starting at s[i]; `len` receives its byte length (1 for an ill-formed
// byte, which decodes to U+FFFD).
char32_t decode_at(std::string_view s, size_t i, size_t& len) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    len = 1;
    return b0;
  }
  size_t n;
  char32_t c;
  char32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, c = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, c = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    len = 1;
    return kReplacement;
  }
  if (i + n > s.size()) {
    len = 1;
    return kReplacement;
  }
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      len = 1;
      return kReplacement;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    len = 1;
    return kReplacement;
  }
  len = n;
  return c;
}

// Byte length of the whitespace character at s[i], or 0 if there is none there.
size_t space_at(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return (b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F)) ? 1 : 0;
  if (b != 0xC2 && b != 0xE1 && b != 0xE2 && b != 0xE3) return 0;  // lead bytes of the others
  size_t len;
  const char32_t c = decode_at(s, i, len);
  return is_python_space(c) ? len : 0;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The ASCII characters mteval-v13a always splits off: { | } ~ [ \ ] ^ _ ` space ! " # $ % &
// ( ) * + : ; < = > ? @ /
bool is_13a_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// One left-to-right pass of a two-character rule, as a regular expression substitution applies
// it: where `match(a, b)` holds for the characters at i and i+1, both are replaced by `emit(a, b)`
// and scanning resumes after them; otherwise the character at i is kept.
template <typename Str, typename Match, typename Emit>
Str pairwise_pass(const Str& s, Match match, Emit emit) {
  Str out;
  out.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}

uint32_t category_mask(char32_t c) {
  return U_GET_GC_MASK(static_cast<UChar32>(c));
}
bool is_punctuation(char32_t c) {
  return (category_mask(c) & U_GC_P_MASK) != 0;
}
bool is_symbol(char32_t c) {
  return (category_mask(c) & U_GC_S_MASK) != 0;
}
bool is_number(char32_t c) {
  return (category_mask(c) & U_GC_N_MASK) != 0;
}

}  // namespace

TokenizerKind tokenizer_from_name(std::string_view name) {
  if (name == "none") return TokenizerKind::kNone;
  if (name == "13a") return TokenizerKind::k13a;
  if (name == "intl") return TokenizerKind::kIntl;
  fail("unknown BLEU tokenizer '{}' (choose 13a, intl or none)", name);
}

std::string_view tokenizer_name(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kNone:
      return "none";
    case TokenizerKind::k13a:
      return "13a";
    case TokenizerKind::kIntl:
      return "intl";
  }
  return "?";
}

std::string tokenize(std::string_view line, TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kNone:
      return std::string(line);
    case TokenizerKind::k13a:
      return tokenize_13a(line);
    case TokenizerKind::kIntl:
      return tokenize_intl(line);
  }
  return std::string(line);
}

std::string tokenize_13a(std::string_view line) {
  // The language-independent part, in mteval-v13a's order (so "&amp;lt;" becomes "<").
  std::string s(line);
  s = replace_all(std::move(s), "<skipped>", "");
  s = replace_all(std::move(s), "-\n", "");
  s = replace_all(std::move(s), "\n", " ");
  s = replace_all(std::move(s), "&quot;", "\"");
  s = replace_all(std::move(s), "&amp;", "&");
  s = replace_all(std::move(s), "&lt;", "<");
  s = replace_all(std::move(s), "&gt;", ">");

  // Padding with spaces lets a sentence-final period split off even after a digit.
  std::string padded;
  padded.reserve(s.size() * 2 + 2);
  padded.push_back(' ');
  for (char c : s) {
    if (is_13a_symbol(c)) {
      padded.push_back(' ');
      padded.push_back(c);
      padded.push_back(' ');
    } else {
      padded.push_back(c);
    }
  }
  padded.push_back(' ');

  // Byte-wise passes give the code-point-wise result: each rule's characters are ASCII, and a
  // multi-byte character only ever counts as "not a digit", which all of its bytes are too.
  auto period_or_comma = [](char c) { return c == '.' || c == ','; };
  // A period or comma after a non-digit: "a." -> "a . ".
  std::string t = pairwise_pass(
      padded, [&](char a, char b) { return !is_digit(a) && period_or_comma(b); },
      [](std::string& out, char a, char b) {
        out.push_back(a);
        out.push_back(' ');
        out.push_back(b);
        out.push_back(' ');
      });
  // A period or comma before a non-digit: ".a" -> " . a".
  t = pairwise_pass(
      t, [&](char a, char b) { return period_or_comma(a) && !is_digit(b); },
      [](std::string& out, char a, char b) {
        out.push_back(' ');
        out.push_back(a);
        out.push_back(' ');
        out.push_back(b);
      });
  // A dash after a digit: "1990-95" -> "1990 - 95".
  t = pairwise_pass(
      t, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& out, char a, char b) {
        out.push_back(a);
        out.push_back(' ');
        out.push_back(b);
        out.push_back(' ');
      });
  return normalize_whitespace(t);
}

std::string tokenize_intl(std::string_view line) {
  std::u32string s = decode_utf8(line);
  // Punctuation after a non-number: "a," -> "a , ".
  s = pairwise_pass(
      s, [](char32_t a, char32_t b) { return !is_number(a) && is_punctuation(b); },
      [](std::u32string& out, char32_t a, char32_t b) {
        out.push_back(a);
        out.push_back(U' ');
        out.push_back(b);
        out.push_back(U' ');
      });
  // Punctuation before a non-number: ",a" -> " , a".
  s = pairwise_pass(
      s, [](char32_t a, char32_t b) { return is_punctuation(a) && !is_number(b); },
      [](std::u32string& out, char32_t a, char32_t b) {
        out.push_back(U' ');
        out.push_back(a);
        out.push_back(U' ');
        out.push_back(b);
      });
  std::string out;
  out.reserve(line.size() * 2);
  for (char32_t c : s) {
    if (is_symbol(c)) {
      out.push_back(' ');
      append_utf8(out, c);
      out.push_back(' ');
    } else {
      append_utf8(out, c);
    }
  }
  return normalize_whitespace(out);
}

bool is_python_space(char32_t c) {
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  size_t start = std::string_view::npos;
  while (i < s.size()) {
    const size_t space = space_at(s, i);
    if (space > 0) {
      if (start != std::string_view::npos) tokens.push_back(s.substr(start, i - start));
      start = std::string_view::npos;
      i += space;
    } else {
      if (start == std::string_view::npos) start = i;
      ++i;
    }
  }
  if (start != std::string_view::npos) tokens.push_back(s.substr(start));
  return tokens;
}

std::string_view rstrip_whitespace(std::string_view s) {
  // Find the end of the last non-whitespace character, scanning forward (UTF-8 is not safely
  // decodable backwards when ill-formed).
  size_t end = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t space = space_at(s, i);
    if (space > 0) {
      i += space;
    } else {
      ++i;
      end = i;
    }
  }
  return s.substr(0, end);
}

std::string remove_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::string_view token : split_whitespace(s)) out.append(token);
  return out;
}

std::string normalize_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::string_view token : split_whitespace(s)) {
    if (!out.empty()) out.push_back(' ');
    out.append(token);
  }
  return out;
}

std::string to_lower(std::string_view s) {
  if (s.empty()) return {};
  struct Closer {
    void operator()(UCaseMap* m) const { ucasemap_close(m); }
  };
  // The root locale: no Turkish or Lithuanian tailoring, whatever the environment says. A const
  // UCaseMap may be shared between threads.
  static const std::unique_ptr<UCaseMap, Closer> map = [] {
    UErrorCode err = U_ZERO_ERROR;
    UCaseMap* m = ucasemap_open("", U_FOLD_CASE_DEFAULT, &err);
    if (U_FAILURE(err)) fail("ICU: cannot open the case mapper: {}", u_errorName(err));
    return std::unique_ptr<UCaseMap, Closer>(m);
  }();
  std::string out(s.size() + 16, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode err = U_ZERO_ERROR;
    const int32_t n = ucasemap_utf8ToLower(map.get(), out.data(), static_cast<int32_t>(out.size()),
                                           s.data(), static_cast<int32_t>(s.size()), &err);
    if (err == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<size_t>(n), '\0');
      continue;
    }
    if (U_FAILURE(err)) fail("ICU: lowercasing failed: {}", u_errorName(err));
    out.resize(static_cast<size_t>(n));
    return out;
  }
  fail("ICU: lowercasing failed: the output kept growing");
}

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    out.push_back(decode_at(s, i, len));
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace transduce::metrics
