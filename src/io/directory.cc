#include "io/directory.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include <spdlog/spdlog.h>

#include "core/error.h"

namespace transduce::io {

namespace fs = std::filesystem;

namespace {

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

// "<dir><marker><pid>-<why>": a name beside `dir` that the next save recognises as temporary.
fs::path aside(const fs::path& dir, std::string_view why) {
  return dir.parent_path() /
         fmt::format("{}{}{}-{}", dir.filename().string(), kTempMarker, ::getpid(), why);
}

}  // namespace

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    fail("{}: cannot open the directory to sync it: {}", dir.string(), errno_message(e));
  }
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (rc != 0 && e != EINVAL && e != ENOTSUP)
    fail("{}: syncing the directory failed: {}", dir.string(), errno_message(e));
}

void make_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("{}: cannot create the directory: {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec)) fail("{}: exists but is not a directory", dir.string());
}

void rename_or_fail(const fs::path& from, const fs::path& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const int e = errno;
    fail("{}: cannot rename {} to it: {}", to.string(), from.string(), errno_message(e));
  }
}

void install_directory(const fs::path& tmp, const fs::path& final_dir) {
  if (std::rename(tmp.c_str(), final_dir.c_str()) == 0) return;
  const int e = errno;
  if (e != ENOTEMPTY && e != EEXIST) {
    fail("{}: cannot rename the new directory {} into place: {}", final_dir.string(), tmp.string(),
         errno_message(e));
  }
  // One exists already: swap, then the old one sits at the temporary name.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return;
  }
  // No exchange on this filesystem: move the old one aside (to a name the next save cleans up).
  const fs::path old = aside(final_dir, "replaced");
  std::error_code ec;
  fs::remove_all(old, ec);
  rename_or_fail(final_dir, old);
  rename_or_fail(tmp, final_dir);
  fs::remove_all(old, ec);
}

void delete_directory(const fs::path& dir) {
  const fs::path doomed = aside(dir, "delete");
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  if (ec) {
    spdlog::warn("{}: cannot delete it: {}", dir.string(), ec.message());
    return;
  }
  fs::remove_all(doomed, ec);
  if (ec) spdlog::warn("{}: cannot remove its files: {}", doomed.string(), ec.message());
}

std::string read_whole_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot read {}", path, what);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail("{}: reading {} failed", path, what);
  return s.str();
}

}  // namespace transduce::io
