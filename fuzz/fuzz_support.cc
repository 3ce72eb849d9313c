#include "fuzz_support.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "text/tokenizer.h"

namespace transduce::fuzz {

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fuzz setup: %s: %s\n", what.c_str(), std::strerror(errno));
  std::abort();
}

void write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("writing an input file");
    done += static_cast<size_t>(n);
  }
}

// Sentences to train small_tokenizer() on: Latin, Greek and Cyrillic letters, CJK, digits,
// punctuation, and characters that NFKC changes (ligatures, full-width letters).
constexpr const char* kSentences[] = {
    "A man in an orange hat starring at something.",
    "A Boston Terrier is running on lush green grass in front of a white fence.",
    "Two young, White males are outside near many bushes.",
    "Several men in hard hats are operating a giant pulley system.",
    "A little girl climbing into a wooden playhouse.",
    "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
    "Ein Boston Terrier läuft über saftig-grünes Gras vor einem weißen Zaun.",
    "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
    "Mehrere Männer mit Schutzhelmen bedienen ein Antriebsradsystem.",
    "Un homme avec un chapeau orange regardant quelque chose.",
    "Deux jeunes hommes blancs sont dehors près de buissons.",
    "Une petite fille grimpe dans une maison de jeu en bois.",
    "Ο άνθρωπος περπατά στο δρόμο με τον σκύλο του.",
    "Человек идёт по улице со своей собакой.",
    "男人和他的狗在街上走。",
    "ﬁve ＦＵＬＬ width ① ² ½ — “quotes” and ‘more’ … İstanbul ΟΔΟΣ",
    "In 2019, prices rose 3.5% to $1,000.50 (about €900) per unit.",
    "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))",
    "x + y = z; a < b > c & d | e ^ f ~ g # h @ i",
    "The quick brown fox jumps over the lazy dog.",
};

}  // namespace

MemFile::MemFile() {
  fd_ = ::memfd_create("transduce-fuzz", MFD_CLOEXEC);
  if (fd_ < 0) die("memfd_create");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
  if (fd_ >= 0) ::close(fd_);
}

void MemFile::set(std::string_view bytes) {
  if (::ftruncate(fd_, 0) != 0) die("truncating an input file");
  write_all(fd_, bytes);
}

ScratchDir::ScratchDir() {
  std::string base = "/dev/shm";
  if (::access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp && *tmp ? tmp : "/tmp";
  }
  std::string pattern = base + "/transduce-fuzz-XXXXXX";
  if (!::mkdtemp(pattern.data())) die("mkdtemp " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::write(const std::string& relative, std::string_view bytes) const {
  const std::filesystem::path p = std::filesystem::path(path_) / relative;
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("creating " + p.string());
  write_all(fd, bytes);
  ::close(fd);
  return p.string();
}

const Tokenizer& small_tokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    static ScratchDir dir;
    std::string text;
    for (const char* s : kSentences) (text += s) += '\n';
    const std::string input = dir.write("train.txt", text);
    Tokenizer::train({input}, 200, "bpe", dir.path() + "/spm", /*threads=*/1);
    return std::make_unique<Tokenizer>(dir.path() + "/spm.model");
  }();
  return *tokenizer;
}

std::vector<std::string_view> split(std::string_view s, char separator, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = s.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  parts.push_back(s);
  return parts;
}

void violated(std::string_view what) {
  std::fprintf(stderr, "\n==== broken invariant: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

}  // namespace transduce::fuzz
