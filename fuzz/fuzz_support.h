// What the fuzz targets share: handing an input to readers that take a path (a file in memory, or a
// file in a scratch directory), a small vocabulary, and reporting a broken invariant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace transduce {
class Tokenizer;
}

namespace transduce::fuzz {

// A file in memory (memfd_create) whose contents each input replaces; path() ("/proc/self/fd/N")
// opens it as any regular file would open, without a disk.
class MemFile {
 public:
  MemFile();
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  const std::string& path() const { return path_; }
  void set(std::string_view bytes);

 private:
  int fd_ = -1;
  std::string path_;
};

// A directory of its own under /dev/shm (or $TMPDIR, or /tmp), removed when the target exits.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes path()/relative (creating its directories) and returns its path.
  std::string write(const std::string& relative, std::string_view bytes) const;

 private:
  std::string path_;
};

// A BPE vocabulary of 200 pieces, trained once by Tokenizer::train (as `transduce vocab` trains
// one) on a few built-in sentences in several scripts.
const Tokenizer& small_tokenizer();

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// `s` cut at each `separator`, into at most `max_parts` parts (the last keeps the rest).
std::vector<std::string_view> split(std::string_view s, char separator, size_t max_parts);

// A broken promise that raised no exception (a wrong result): prints it and aborts, which
// libFuzzer reports as a crash with the input.
[[noreturn]] void violated(std::string_view what);

}  // namespace transduce::fuzz
