#include "support/toy_corpus.h"

#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/run_command.h"

namespace transduce::testing {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "_XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void write_toy_corpus(const std::string& dir, int pairs) {
  static const char* const kWords[] = {"red", "dog", "runs", "over", "the", "street", "a", "cat"};
  std::ofstream src(dir + "/train.src"), tgt(dir + "/train.tgt");
  for (int i = 0; i < pairs; ++i) {
    const int len = 3 + i % 5;
    for (int w = 0; w < len; ++w) {
      std::string word = kWords[(i * 3 + w * 5) % 8];
      src << (w ? " " : "") << word;
      for (char& c : word) c = static_cast<char>(std::toupper(c));
      tgt << (w ? " " : "") << word;
    }
    src << "\n";
    tgt << "\n";
  }
}

std::string make_toy_vocab(const std::string& dir) {
  const CommandResult v = run_transduce("vocab --input " + dir + "/train.src " + dir +
                                        "/train.tgt --vocab-size 60 --output " + dir + "/vocab");
  return v.status == 0 ? std::string() : v.out;
}

}  // namespace transduce::testing
