#include "decode/word_alignment.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "text/tokenizer.h"

namespace transduce {

std::vector<int64_t> piece_alignment(const Tensor& cross) {
  const Tensor c = cross.is_contiguous() ? cross : cross.clone();
  const int64_t heads = c.dim(0), queries = c.dim(1), keys = c.dim(2);
  std::vector<int64_t> out;
  for (int64_t q = 0; q + 1 < queries; ++q) {
    int64_t best = 0;
    double best_weight = -1;
    for (int64_t k = 0; k + 1 < keys; ++k) {
      double sum = 0;
      for (int64_t h = 0; h < heads; ++h) sum += c.f32()[(h * queries + q) * keys + k];
      if (sum > best_weight) {
        best_weight = sum;
        best = k;
      }
    }
    out.push_back(best);
  }
  return out;
}

std::vector<int64_t> word_of_pieces(const std::vector<std::string>& pieces) {
  static const std::string kBoundary = "\u2581";
  std::vector<int64_t> out;
  int64_t word = -1;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i == 0 || pieces[i].rfind(kBoundary, 0) == 0) ++word;
    out.push_back(word);
  }
  return out;
}

WordAlignment word_alignment(const AttentionMaps& maps, const Tokenizer& tokenizer) {
  if (maps.cross.empty()) fail("word alignment needs the encoder-decoder attention");
  const size_t layer = maps.cross.size() >= 2 ? maps.cross.size() - 2 : 0;  // the penultimate
  const std::vector<int64_t> to_source = piece_alignment(maps.cross[layer]);
  const auto pieces = [&](const std::vector<int32_t>& ids) {
    std::vector<std::string> out;
    for (size_t i = 0; i + 1 < ids.size(); ++i) out.push_back(tokenizer.piece(ids[i]));  // no EOS
    return out;
  };
  const std::vector<int64_t> source_word = word_of_pieces(pieces(maps.source));
  const std::vector<int64_t> target_word = word_of_pieces(pieces(maps.target));
  WordAlignment out;
  for (size_t t = 0; t < to_source.size() && t < target_word.size(); ++t)
    out.emplace_back(source_word[static_cast<size_t>(to_source[t])], target_word[t]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string pharaoh(const WordAlignment& alignment) {
  std::string out;
  for (const auto& [s, t] : alignment) out += fmt::format("{}{}-{}", out.empty() ? "" : " ", s, t);
  return out;
}

}  // namespace transduce
