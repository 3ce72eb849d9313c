// Text preparation for BLEU and chrF exactly as sacreBLEU 2.x does it: its tokenizers ("none",
// "13a", "intl"), Unicode lowercasing, and Python's notion of whitespace (str.split / str.rstrip),
// so that scores computed here equal sacreBLEU's on the same files.
//
// Strings are UTF-8. Input is expected to be valid UTF-8 (the CLI validates it); an ill-formed
// byte is read as U+FFFD where code points matter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace transduce::metrics {

enum class TokenizerKind {
  kNone,  // whitespace splitting only
  k13a,   // mteval-v13a.pl, the WMT default and sacreBLEU's default
  kIntl,  // mteval-v14.pl --international-tokenization: Unicode punctuation and symbols
};

// "none", "13a" or "intl"; anything else fails naming the choices.
TokenizerKind tokenizer_from_name(std::string_view name);
std::string_view tokenizer_name(TokenizerKind kind);

// The tokenized line, tokens joined by single spaces, no leading or trailing space (for kNone:
// the line unchanged; BLEU splits it on whitespace afterwards).
std::string tokenize(std::string_view line, TokenizerKind kind);

// mteval-v13a: unescapes &quot; &amp; &lt; &gt;, drops "<skipped>" and "-\n" joins, then splits
// off ASCII punctuation and symbols; '.' and ',' stay inside numbers ("1,000.5") and '-' is split
// only after a digit. Works on bytes: every rule involves ASCII characters only.
std::string tokenize_13a(std::string_view line);

// mteval-v14 international: a Unicode punctuation character (general category P*) is split from
// a neighbour that is not a number (N*), so "1,000" keeps its comma; every symbol (S*) is split
// from both sides. Quirk kept from mteval-v14 and sacreBLEU: a period right after a digit at the
// end of the line stays attached ("in 2019." -> "in 2019.").
std::string tokenize_intl(std::string_view line);

// Whitespace as Python's str.isspace() sees it: ASCII \t \n \v \f \r and space, the separators
// U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_space(char32_t c);

// Python's str.split() with no argument: the maximal runs of non-whitespace.
std::vector<std::string_view> split_whitespace(std::string_view s);
// Python's str.rstrip() with no argument.
std::string_view rstrip_whitespace(std::string_view s);
// "".join(s.split()): every whitespace character removed.
std::string remove_whitespace(std::string_view s);
// " ".join(s.split()).
std::string normalize_whitespace(std::string_view s);

// Unicode full lowercase mapping, language-independent, as Python's str.lower(): one-to-many
// mappings ("İ" -> "i̇") and the final sigma rule ("ΟΔΟΣ" -> "οδος") included. Uses ICU.
std::string to_lower(std::string_view s);

// Code points of `s`; ill-formed bytes become U+FFFD.
std::u32string decode_utf8(std::string_view s);
void append_utf8(std::string& out, char32_t c);

}  // namespace transduce::metrics
