#include "text/corpus.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>

#include "core/error.h"
#include "core/utf8.h"
#include "text/tokenizer.h"

namespace transduce {
namespace {

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail("{}: cannot open: {}", path, errno_message(errno));
  std::string bytes;
  struct stat st;
  if (::fstat(::fileno(f), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      std::fclose(f);
      fail("{}: is a directory, not a text file", path);
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  const bool failed = std::ferror(f);
  const int e = errno;
  std::fclose(f);
  if (failed) fail("{}: read failed: {}", path, errno_message(e));
  return bytes;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool blank(std::string_view s) {
  for (char c : s)
    if (!is_space(c)) return false;
  return true;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& path) {
  const std::string bytes = read_file(path);
  std::string_view rest(bytes);
  if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);
  std::vector<std::string> lines;
  int64_t number = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    size_t bad = 0;
    if (!valid_utf8(line, &bad)) fail("{}:{}: invalid UTF-8 at byte {}", path, number, bad + 1);
    lines.emplace_back(line);
  }
  return lines;
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path) {
  ParallelText text;
  text.src_path = src_path;
  text.tgt_path = tgt_path;
  text.src = read_lines(src_path);
  text.tgt = read_lines(tgt_path);
  if (text.src.size() != text.tgt.size())
    fail("{} has {} lines but {} has {}: parallel files need one line per sentence pair", src_path,
         text.src.size(), tgt_path, text.tgt.size());
  return text;
}

std::vector<Example> encode_parallel(const ParallelText& text, const Tokenizer& tok, int max_len,
                                     EncodeStats* stats, std::vector<int64_t>* kept_lines) {
  TD_CHECK(text.src.size() == text.tgt.size(), "{} source lines but {} target lines",
           text.src.size(), text.tgt.size());
  const int64_t n = static_cast<int64_t>(text.src.size());
  enum Verdict : char { kKeep, kEmpty, kLong };
  std::vector<Example> encoded(n);
  std::vector<char> verdict(n, kKeep);
  std::exception_ptr error;
  auto too_long = [max_len](const std::vector<int32_t>& ids) {
    return !fits_max_len(ids.size(), max_len);
  };

#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < n; ++i) {
    try {
      if (blank(text.src[i]) || blank(text.tgt[i])) {
        verdict[i] = kEmpty;
        continue;
      }
      Example& e = encoded[i];
      e.src = tok.encode(text.src[i]);
      e.tgt = tok.encode(text.tgt[i]);
      if (e.src.empty() || e.tgt.empty())
        verdict[i] = kEmpty;
      else if (too_long(e.src) || too_long(e.tgt))
        verdict[i] = kLong;
      if (verdict[i] != kKeep) e = Example{};
    } catch (...) {
#pragma omp critical(transduce_encode_parallel_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);

  EncodeStats s;
  s.pairs = n;
  size_t out = 0;  // compact the kept pairs in place, keeping their order
  if (kept_lines) kept_lines->clear();
  for (int64_t i = 0; i < n; ++i) {
    if (verdict[i] == kEmpty) {
      ++s.skipped_empty;
    } else if (verdict[i] == kLong) {
      ++s.skipped_long;
    } else {
      if (out != static_cast<size_t>(i)) encoded[out] = std::move(encoded[i]);
      ++out;
      if (kept_lines) kept_lines->push_back(i);
    }
  }
  encoded.resize(out);
  s.kept = static_cast<int64_t>(out);
  if (stats) *stats = s;
  return encoded;
}

}  // namespace transduce
