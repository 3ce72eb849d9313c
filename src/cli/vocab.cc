// `transduce vocab`: trains the shared SentencePiece vocabulary on source and target text.
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/threads.h"
#include "text/corpus.h"
#include "text/tokenizer.h"

namespace transduce::cli {
namespace {

struct VocabOptions {
  std::vector<std::string> inputs;
  int size = 0;
  std::string out;
  std::string type = "bpe";
  uint64_t max_sentences = 0;
};

void remove_quietly(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

void run_vocab(const VocabOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) fail("{}: cannot create the output directory: {}", o.out, ec.message());
  if (!std::filesystem::is_directory(o.out)) fail("{}: exists and is not a directory", o.out);

  // Validate everything first, so bad input gets our path:line message, not SentencePiece's.
  int64_t lines = 0;
  for (const std::string& path : o.inputs) lines += static_cast<int64_t>(read_lines(path).size());
  if (lines == 0) fail("the input files have no lines to train a vocabulary on");

  const std::string dir = o.out;
  const std::string prefix = dir + "/spm";
  const std::string tmp = fmt::format("{}/.spm.tmp.{}", dir, ::getpid());
  try {
    Tokenizer::train(o.inputs, o.size, o.type, tmp, num_threads(), o.max_sentences);
    // The vocabulary listing first, the model (what readers look for) last.
    for (const char* ext : {".vocab", ".model"}) {
      if (std::rename((tmp + ext).c_str(), (prefix + ext).c_str()) != 0)
        fail("{}{}: cannot move the new vocabulary into place: {}", prefix, ext,
             std::error_code(errno, std::generic_category()).message());
    }
  } catch (...) {
    remove_quietly(tmp + ".model");
    remove_quietly(tmp + ".vocab");
    throw;
  }
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }

  const Tokenizer tok(prefix + ".model");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("vocab: {}.model: {} pieces ({}) from {} lines in {} file{}, {:.1f} s\n", prefix,
             tok.vocab_size(), o.type, lines, o.inputs.size(), o.inputs.size() == 1 ? "" : "s",
             seconds);
}

}  // namespace

void register_vocab(CLI::App& app) {
  auto o = std::make_shared<VocabOptions>();
  CLI::App* cmd = app.add_subcommand(
      "vocab", "train the shared subword vocabulary (SentencePiece) on source and target text");
  cmd->add_option("--input", o->inputs, "text files, one sentence a line (all languages)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--size", o->size, "vocabulary size, the four reserved ids included")
      ->required()
      ->check(CLI::Range(8, 1 << 24));
  cmd->add_option("--out", o->out, "output directory: spm.model and spm.vocab are written there")
      ->required();
  cmd->add_option("--type", o->type, "subword model")
      ->capture_default_str()
      ->check(CLI::IsMember({"bpe", "unigram"}));
  cmd->add_option("--max-sentences", o->max_sentences,
                  "sample at most this many lines for training (0: up to 10 million)")
      ->capture_default_str();
  cmd->callback([o] { run_vocab(*o); });
}

}  // namespace transduce::cli
