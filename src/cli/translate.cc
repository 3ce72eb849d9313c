// `transduce translate`: stdin to stdout (or files), streamed: each batch's lines are written as
// soon as they are translated, in input order.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "decode/loaded_model.h"
#include "decode/translator.h"
#include "io/atomic_file.h"
#include "serve/api.h"
#include "text/utf8.h"

namespace transduce::cli {

namespace {

struct TranslateFlags {
  std::string model_dir, input, output, attention;
  TranslateOptions options;
  int chunk_lines = 0;  // 0: as many as a batch holds
};

// Reads lines from a file descriptor, handing over what has arrived without waiting for more.
class LineReader {
 public:
  LineReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

  // Appends complete lines to `lines`; blocks only when none is pending. Returns false at the
  // end of the input once everything was handed over.
  bool read_available(std::vector<std::string>& lines, size_t limit) {
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

 private:
  bool take_line(std::vector<std::string>& lines) {
    const size_t nl = buffer_.find('\n');
    if (nl == std::string::npos) return false;
    std::string line = buffer_.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    buffer_.erase(0, nl + 1);
    lines.push_back(std::move(line));
    return true;
  }

  int fd_;
  std::string name_;
  std::string buffer_;
  bool eof_ = false;
};

// The --attention file: {"model": name, "sentences": [{"line", "source", "translation", "score",
// "attention"}, ...]}, one sentence per input line, written as the translation goes.
class AttentionWriter {
 public:
  AttentionWriter(std::FILE* out, const LoadedModel& m) : out_(out), tokenizer_(m.tokenizer()) {
    fmt::print(out_, "{{\"model\": {}, \"sentences\": [", nlohmann::json(m.name()).dump());
  }
  void add(int64_t line, const std::string& source, const Translation& best) {
    const nlohmann::json entry = attention_file_sentence(line, source, best, tokenizer_);
    fmt::print(out_, "{}\n{}", first_ ? "" : ",", entry.dump());
    first_ = false;
  }
  void finish() { fmt::print(out_, "\n]}}\n"); }

 private:
  std::FILE* out_;
  const Tokenizer& tokenizer_;
  bool first_ = true;
};

void run_translate(const TranslateFlags& f) {
  LoadedModel loaded(f.model_dir);
  TranslateOptions options = f.options;
  options.attention = !f.attention.empty();
  Translator translator(loaded.model(), loaded.tokenizer(), options);

  int in_fd = STDIN_FILENO;
  if (!f.input.empty()) {
    in_fd = ::open(f.input.c_str(), O_RDONLY);
    if (in_fd < 0) fail("{}: cannot open: {}", f.input, std::strerror(errno));
  }
  std::FILE* out = stdout;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out_file(nullptr, std::fclose);
  if (!f.output.empty()) {
    out_file.reset(std::fopen(f.output.c_str(), "w"));
    if (!out_file) fail("{}: cannot write: {}", f.output, std::strerror(errno));
    out = out_file.get();
  }
  const std::string in_name = f.input.empty() ? "stdin" : f.input;
  LineReader reader(in_fd, in_name);
  const size_t chunk = f.chunk_lines > 0
                           ? static_cast<size_t>(f.chunk_lines)
                           : static_cast<size_t>(std::max<int64_t>(1, f.options.batch_tokens / 8));
  auto translate_all = [&](AttentionWriter* attention) {
    int64_t line_number = 1;
    std::vector<std::string> lines;
    while (reader.read_available(lines, chunk)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        size_t bad = 0;
        if (!valid_utf8(lines[i], &bad))
          fail("{}:{}: invalid UTF-8 at byte {}", in_name, line_number + static_cast<int64_t>(i),
               bad + 1);
      }
      const auto results = translator.translate(lines, line_number, [](const std::string& w) {
        fmt::print(stderr, "transduce: warning: {}\n", w);
      });
      for (size_t i = 0; i < results.size(); ++i) {
        const int64_t line = line_number + static_cast<int64_t>(i);
        if (f.options.search.nbest > 1) {
          for (const Translation& t : results[i])
            fmt::print(out, "{} ||| {} ||| {:.4f}\n", line - 1, t.text, t.score);
        } else {
          fmt::print(out, "{}\n", results[i].empty() ? "" : results[i][0].text);
        }
        if (attention) attention->add(line, lines[i], results[i].front());
      }
      std::fflush(out);
      line_number += static_cast<int64_t>(lines.size());
      lines.clear();
    }
  };
  if (f.attention.empty()) {
    translate_all(nullptr);
  } else {
    // Written whole or not at all: a failure part-way leaves no half file behind.
    io::write_file_atomically(f.attention, [&](std::FILE* file) {
      AttentionWriter writer(file, loaded);
      translate_all(&writer);
      writer.finish();
    });
  }
  if (in_fd != STDIN_FILENO) ::close(in_fd);
  if (out_file && std::fflush(out_file.get()) != 0)
    fail("{}: write failed: {}", f.output, std::strerror(errno));
}

}  // namespace

void register_translate(CLI::App& app) {
  auto f = std::make_shared<TranslateFlags>();
  CLI::App* cmd = app.add_subcommand("translate", "translate text, one sentence a line");
  cmd->add_option("-m,--model", f->model_dir, "model directory")->required();
  cmd->add_option("--input", f->input, "read this file instead of stdin");
  cmd->add_option("--output", f->output, "write this file instead of stdout");
  SearchOptions& s = f->options.search;
  cmd->add_option("--beam", s.beam, "beam size (1: greedy)")->capture_default_str();
  cmd->add_option("--alpha", s.alpha, "length penalty exponent")->capture_default_str();
  cmd->add_option("--max-len-a", s.max_len_a, "output length limit: a * source + b")
      ->capture_default_str();
  cmd->add_option("--max-len-b", s.max_len_b, "output length limit: a * source + b")
      ->capture_default_str();
  cmd->add_option("--nbest", s.nbest, "print this many hypotheses: `line ||| text ||| score`")
      ->capture_default_str();
  cmd->add_option("--batch-tokens", f->options.batch_tokens, "source tokens per batch")
      ->capture_default_str();
  cmd->add_option("--attention", f->attention,
                  "write each best translation's attention weights (every layer and head) to "
                  "this JSON file");
  cmd->add_option("--chunk-lines", f->chunk_lines,
                  "most lines translated together when input arrives faster (default: a batch)");
  cmd->callback([f] { run_translate(*f); });
}

}  // namespace transduce::cli
