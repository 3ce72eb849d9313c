// `transduce trees`: a treebank (Penn Treebank brackets, one tree a line or spread over lines)
// rewritten one tree a line, as read or normalised, or as what a parser sees: its words, or its
// linearisation.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "parse/linearize.h"
#include "parse/tree.h"

namespace transduce::cli {

namespace {

struct TreesFlags {
  std::string input, output;
  bool normalised = false, words = false, linearized = false;
};

std::string show(const parse::Tree& raw, const TreesFlags& f) {
  if (!f.normalised && !f.words && !f.linearized) return parse::to_string(raw);
  const parse::Tree top = parse::normalise(raw);
  if (f.normalised) return top.children.empty() ? "" : parse::to_string(top);
  if (f.linearized) return parse::linearized_text(top);
  std::string line;
  for (const std::string& w : top.words()) line += (line.empty() ? "" : " ") + w;
  return line;
}

void run_trees(const TreesFlags& f) {
  if (f.normalised + f.words + f.linearized > 1)
    fail("give at most one of --normalised, --words and --linearized");
  const std::vector<parse::Tree> trees = f.input.empty()
                                             ? parse::read_tree_file("/dev/stdin", "stdin")
                                             : parse::read_tree_file(f.input);
  std::string out;
  for (const parse::Tree& t : trees) out += show(t, f) + "\n";
  if (f.output.empty()) {
    fmt::print("{}", out);
  } else {
    io::write_file_atomically(f.output, out);
  }
}

}  // namespace

void register_trees(CLI::App& app) {
  auto f = std::make_shared<TreesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "trees", "rewrite a treebank one tree a line: as read, normalised, its words, or linearised");
  cmd->add_option("--input", f->input, "read this treebank instead of stdin");
  cmd->add_option("-o,--output", f->output, "write this file (atomically) instead of stdout");
  cmd->add_flag("--normalised", f->normalised,
                "as parsers see them: function tags, empty elements and emptied constituents "
                "removed, under one TOP root (an empty line for a tree with no word left)");
  cmd->add_flag("--words", f->words, "the words of each normalised tree, separated by spaces");
  cmd->add_flag("--linearized", f->linearized,
                "each normalised tree as a parser's target: brackets with XX for every word");
  cmd->callback([f] { run_trees(*f); });
}

}  // namespace transduce::cli
