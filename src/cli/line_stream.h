// Line-by-line commands (`translate`, `parse`): stdin or --input in, stdout or --output out, and
// input handed over as it arrives so that a stream is answered batch by batch.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace transduce::cli {

// Reads lines from a file descriptor, handing over what has arrived without waiting for more.
class LineReader {
 public:
  LineReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

  // Appends complete lines to `lines`; blocks only when none is pending. Returns false at the
  // end of the input once everything was handed over.
  bool read_available(std::vector<std::string>& lines, size_t limit);

 private:
  bool take_line(std::vector<std::string>& lines);

  int fd_;
  std::string name_;
  std::string buffer_;
  bool eof_ = false;
};

// The input file (or stdin) and the output file (or stdout) of a line-by-line command.
class LineStreams {
 public:
  // Empty paths mean stdin and stdout. A file that cannot be opened is an error naming it.
  LineStreams(const std::string& input, const std::string& output);
  ~LineStreams();
  LineStreams(const LineStreams&) = delete;
  LineStreams& operator=(const LineStreams&) = delete;

  LineReader& reader() { return reader_; }
  const std::string& input_name() const { return input_name_; }
  std::FILE* out() const { return out_; }
  // Flushes the output file; a failed write is an error naming it.
  void finish();

 private:
  int in_fd_;
  std::string input_name_, output_;
  LineReader reader_;
  std::FILE* out_ = stdout;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out_file_{nullptr, std::fclose};
};

}  // namespace transduce::cli
