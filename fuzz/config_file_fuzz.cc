// apply_config_file (src/cli/config_file.h) on any `train --config` file, against a command line
// with every training option's flag (train/train_options.h) and the other kinds train has: a
// switch, a text and a list of texts. A bad file must be one transduce::Error naming the file;
// what it accepts must leave the options within their declared ranges.
#include <cstddef>
#include <cstdint>

#include <CLI/CLI.hpp>

#include "cli/config_file.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "fuzz_support.h"
#include "train/train_options.h"

using namespace transduce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  file.set(fuzz::as_text(data, size));
  CLI::App app{"fuzz"};
  CLI::App* cmd = app.add_subcommand("train");
  TrainOptions options;
  bool subtrees = false;
  std::string src;
  std::vector<std::string> inputs;
  cli::add_option_flags(*cmd, train_option_specs(), options);
  cmd->add_flag("--subtrees", subtrees);
  cmd->add_option("--src", src);
  cmd->add_option("--input", inputs);
  app.parse(std::vector<std::string>{"train"});
  try {
    cli::apply_config_file(*cmd, file.path());
  } catch (const Error& e) {
    if (std::string_view(e.what()).find(file.path()) != 0)
      fuzz::violated("a configuration file's error does not start with the file's path");
    return 0;
  }
  try {
    check_train_options(options);
  } catch (const Error& e) {
    // Only the options together may be refused (no limit to stop at); each is in its range.
    if (std::string_view(e.what()).find("training needs a limit") == std::string_view::npos)
      fuzz::violated("a configuration file set an option out of its declared range");
  }
  return 0;
}
