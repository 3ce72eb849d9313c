#include "cli/line_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace transduce::cli {

namespace {

int open_input(const std::string& path) {
  if (path.empty()) return STDIN_FILENO;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  return fd;
}

}  // namespace

bool LineReader::read_available(std::vector<std::string>& lines, size_t limit) {
  while (lines.size() < limit) {
    if (take_line(lines)) continue;
    if (eof_) {
      if (!buffer_.empty()) {
        lines.push_back(std::move(buffer_));
        buffer_.clear();
      }
      return !lines.empty();
    }
    // Wait for input only if we have nothing to hand over yet.
    if (!lines.empty()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return true;
    }
    char chunk[1 << 16];
    const ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail("{}: read failed: {}", name_, std::strerror(errno));
    }
    if (got == 0) eof_ = true;
    buffer_.append(chunk, static_cast<size_t>(got));
  }
  return true;
}

bool LineReader::take_line(std::vector<std::string>& lines) {
  const size_t nl = buffer_.find('\n');
  if (nl == std::string::npos) return false;
  std::string line = buffer_.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  buffer_.erase(0, nl + 1);
  lines.push_back(std::move(line));
  return true;
}

LineStreams::LineStreams(const std::string& input, const std::string& output)
    : in_fd_(open_input(input)),
      input_name_(input.empty() ? "stdin" : input),
      output_(output),
      reader_(in_fd_, input_name_) {
  if (!output.empty()) {
    out_file_.reset(std::fopen(output.c_str(), "w"));
    if (!out_file_) {
      if (in_fd_ != STDIN_FILENO) ::close(in_fd_);
      fail("{}: cannot write: {}", output, std::strerror(errno));
    }
    out_ = out_file_.get();
  }
}

LineStreams::~LineStreams() {
  if (in_fd_ != STDIN_FILENO) ::close(in_fd_);
}

void LineStreams::finish() {
  if (out_file_ && std::fflush(out_file_.get()) != 0)
    fail("{}: write failed: {}", output_, std::strerror(errno));
}

}  // namespace transduce::cli
