// The Penn Treebank reader (src/parse/tree.h) as `transduce trees`, `evalb` and training read a
// treebank: read_tree_file (read_lines' UTF-8 checks, then read_trees), then what they do with each
// tree: normalise it, print it, list its words and tags. Bad input must be a transduce::Error;
// a tree printed by to_string must read back as the same tree.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_support.h"
#include "parse/tree.h"

using namespace transduce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  file.set(fuzz::as_text(data, size));
  std::vector<parse::Tree> trees;
  try {
    trees = parse::read_tree_file(file.path(), "input");
  } catch (const Error&) {
    return 0;
  }
  for (const parse::Tree& t : trees) {
    const std::string text = parse::to_string(t);
    std::vector<parse::Tree> again;
    try {
      again = parse::read_trees(text, "printed");
    } catch (const Error& e) {
      fuzz::violated(std::string("a printed tree does not read back: ") + e.what());
    }
    if (again.size() != 1 || !(again[0] == t)) fuzz::violated("a printed tree reads back changed");
    if (t.words().size() != t.tags().size()) fuzz::violated("words and tags differ in number");
    const parse::Tree n = parse::normalise(t);
    if (n.label != "TOP") fuzz::violated("normalise gave a root other than TOP");
    (void)parse::to_string(n);
    (void)n.words();
  }
  return 0;
}
