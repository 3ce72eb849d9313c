#include "support/random_parser.h"

#include <fstream>
#include <stdexcept>

#include "parse/parse_settings.h"
#include "support/random_model.h"
#include "support/run_command.h"
#include "support/shared_data.h"

namespace transduce::testing {

RandomParserDir::RandomParserDir(const std::string& prefix, int trees, uint64_t seed)
    : dir_(prefix) {
  std::ifstream in(shared_data_file("ptb-sample/train.trees"));
  std::ofstream out(this->trees());
  std::string line;
  for (int i = 0; i < trees && std::getline(in, line); ++i) out << line << '\n';
  out.close();
  const CommandResult made =
      run_transduce("vocab --trees " + this->trees() + " --vocab-size 1000 --output " + vocab());
  if (made.status != 0) throw std::runtime_error("transduce vocab --trees failed: " + made.out);
  write_random_model(vocab(), model(), seed);
  parse::write_parse_settings(model(), parse::ParseSettings{});
}

}  // namespace transduce::testing
