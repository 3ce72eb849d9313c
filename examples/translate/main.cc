// Translates standard input with a model directory through transduce's public API, prints the
// translations and each one's score as a translation of its source, and, given a reference
// file, the corpus BLEU and chrF:
//   translate_example MODEL_DIR [REFERENCES] < sources
#include <transduce/transduce.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> read_lines(std::istream& in) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: translate_example MODEL_DIR [REFERENCES] < sources\n";
    return 2;
  }
  try {
    transduce::api::Translator translator(argv[1]);
    const std::vector<std::string> sources = read_lines(std::cin);
    std::vector<std::string> best;
    for (const auto& hyps : translator.translate(sources)) best.push_back(hyps.front().text);
    const std::vector<transduce::api::PairScore> scores = translator.score(sources, best);
    for (size_t i = 0; i < best.size(); ++i)
      std::cout << best[i] << '\t' << scores[i].score << '\n';
    if (argc == 3) {
      std::ifstream refs(argv[2]);
      if (!refs) throw transduce::api::Error(std::string(argv[2]) + ": cannot read");
      const std::vector<std::vector<std::string>> references{read_lines(refs)};
      std::cout << transduce::api::bleu(best, references).text << '\n'
                << transduce::api::chrf(best, references).text << '\n';
    }
  } catch (const transduce::api::Error& e) {
    std::cerr << "translate_example: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
