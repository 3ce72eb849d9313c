#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "core/error.h"
#include "io/directory.h"

namespace transduce::io {
namespace {

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Makes the rename durable.
void sync_directory_of(const std::string& path) {
  try {
    sync_directory(directory_of(path));
  } catch (const Error& e) {
    fail("{}: written, but {}", path, e.what());
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int e = errno;
    fail("{}: cannot create the temporary file {}: {}", path, tmp, errno_message(e));
  }
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("{}: cannot open a stream on the temporary file {}: {}", path, tmp, errno_message(e));
  }

  // Closes the stream (if still open), removes the temporary file, and throws.
  auto abandon = [&](const std::string& what, int e) {
    if (f) std::fclose(f);
    f = nullptr;
    ::unlink(tmp.c_str());
    fail("{}: {} failed: {}", path, what, errno_message(e));
  };

  try {
    errno = 0;
    write(f);
  } catch (...) {
    std::fclose(f);
    ::unlink(tmp.c_str());
    throw;
  }
  // A failed fwrite leaves the error flag set; errno still holds its cause unless something
  // after it in `write` overwrote it.
  if (std::ferror(f)) {
    const int e = errno ? errno : EIO;
    abandon("writing", e);
  }
  if (std::fflush(f) != 0) {
    const int e = errno;
    abandon("writing", e);
  }
  if (::fsync(::fileno(f)) != 0) {
    const int e = errno;
    abandon("fsync", e);
  }
  const int rc = std::fclose(f);
  const int close_errno = errno;
  f = nullptr;
  if (rc != 0) abandon("closing the temporary file", close_errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    abandon(fmt::format("renaming {} over it", tmp), e);
  }
  sync_directory_of(path);
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, [&](std::FILE* f) {
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
  });
}

void copy_file_atomically(const std::string& from, const std::string& to) {
  write_file_atomically(to, read_whole_file(from, "the file to copy"));
}

}  // namespace transduce::io
