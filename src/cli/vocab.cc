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
#include "io/atomic_file.h"
#include "parse/tree_data.h"
#include "text/corpus.h"
#include "text/tokenizer.h"

namespace transduce::cli {
namespace {

struct VocabOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> trees;
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

  if (o.inputs.empty() && o.trees.empty()) fail("give --input text files and/or --trees treebanks");
  // Validate everything first, so bad input gets our path:line message, not SentencePiece's.
  int64_t lines = 0;
  for (const std::string& path : o.inputs) lines += static_cast<int64_t>(read_lines(path).size());

  const std::string dir = o.out;
  const std::string prefix = dir + "/spm";
  const std::string tmp = fmt::format("{}/.spm.tmp.{}", dir, ::getpid());
  // Treebanks: their words join the text, their brackets become symbols of their own.
  std::vector<std::string> inputs = o.inputs, symbols;
  const std::string words_file = tmp + ".words";
  if (!o.trees.empty()) {
    std::vector<parse::Tree> trees;
    for (const std::string& path : o.trees)
      for (parse::Tree& t : parse::read_normalised_trees(path)) trees.push_back(std::move(t));
    symbols = parse::tree_symbols(trees);
    std::string text;
    for (const parse::Tree& t : trees) {
      if (t.children.empty()) continue;
      std::string line;
      for (const std::string& w : t.words())
        line += (line.empty() ? "" : " ") + parse::escape_word(w);
      text += line + "\n";
      ++lines;
    }
    io::write_file_atomically(words_file, text);
    inputs.push_back(words_file);
  }
  if (lines == 0) fail("the input files have no lines to train a vocabulary on");
  try {
    Tokenizer::train(inputs, o.size, o.type, tmp, num_threads(), o.max_sentences, symbols);
    remove_quietly(words_file);
    // The vocabulary listing first, the model (what readers look for) last.
    for (const char* ext : {".vocab", ".model"}) {
      if (std::rename((tmp + ext).c_str(), (prefix + ext).c_str()) != 0)
        fail("{}{}: cannot move the new vocabulary into place: {}", prefix, ext,
             std::error_code(errno, std::generic_category()).message());
    }
  } catch (...) {
    remove_quietly(words_file);
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
  const size_t files = o.inputs.size() + o.trees.size();
  fmt::print("vocab: {}.model: {} pieces ({}) from {} lines in {} file{}{}, {:.1f} s\n", prefix,
             tok.vocab_size(), o.type, lines, files, files == 1 ? "" : "s",
             symbols.empty() ? "" : fmt::format(", {} tree symbols", symbols.size()), seconds);
}

}  // namespace

void register_vocab(CLI::App& app) {
  auto o = std::make_shared<VocabOptions>();
  CLI::App* cmd = app.add_subcommand(
      "vocab", "train the shared subword vocabulary (SentencePiece) on source and target text");
  cmd->add_option("--input", o->inputs, "text files, one sentence a line (all languages)")
      ->expected(1, -1);
  cmd->add_option("--trees", o->trees,
                  "treebanks (Penn Treebank brackets) for a parser: their words, and every "
                  "label's brackets as symbols")
      ->expected(1, -1);
  cmd->add_option("--vocab-size", o->size, "vocabulary size, the four reserved ids included")
      ->required()
      ->check(CLI::Range(8, 1 << 24));
  cmd->add_option("-o,--output", o->out,
                  "output directory: spm.model and spm.vocab are written there")
      ->required();
  cmd->add_option("--vocab-type", o->type, "subword model")
      ->capture_default_str()
      ->check(CLI::IsMember({"bpe", "unigram"}));
  cmd->add_option("--max-lines", o->max_sentences,
                  "sample at most this many lines for training (0: up to 10 million)")
      ->capture_default_str();
  cmd->callback([o] { run_vocab(*o); });
}

}  // namespace transduce::cli
