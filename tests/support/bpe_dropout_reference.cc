#include "support/bpe_dropout_reference.h"

#include <sentencepiece_processor.h>

#include <queue>
#include <stdexcept>
#include <vector>

namespace transduce::testing {

BpeDropoutReference::BpeDropoutReference(const std::string& model_path) {
  sentencepiece::SentencePieceProcessor sp;
  if (!sp.Load(model_path).ok()) throw std::runtime_error("cannot load " + model_path);
  for (int id = 0; id < sp.GetPieceSize(); ++id)
    if (!sp.IsControl(id) && !sp.IsUnknown(id) && !sp.IsUnused(id) && !sp.IsByte(id))
      scores_.emplace(sp.IdToPiece(id), sp.GetScore(id));
}

int64_t BpeDropoutReference::pieces(std::string_view text, float dropout, SplitMix64& rng) const {
  // Symbols as byte ranges of `text` in a doubly linked list; a merged-away symbol has size 0.
  struct Symbol {
    size_t begin, size;
    int64_t prev, next;
  };
  std::vector<Symbol> symbols;
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;  // the code point's bytes, from its lead byte
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead >= 0xf0)
      n = 4;
    else if (lead >= 0xe0)
      n = 3;
    else if (lead >= 0xc0)
      n = 2;
    const auto index = static_cast<int64_t>(symbols.size());
    symbols.push_back({i, n, index - 1, index + 1});
    i += n;
  }
  if (symbols.empty()) return 0;
  symbols.back().next = -1;

  struct Pair {
    float score;
    int64_t left, right;
    size_t size;  // of the merged piece: a pair whose symbols changed since is stale
  };
  auto after = [](const Pair& a, const Pair& b) {  // b is taken first
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(after)> agenda(after);
  auto consider = [&](int64_t left, int64_t right) {
    if (left < 0 || right < 0) return;
    const size_t size = symbols[left].size + symbols[right].size;
    const auto it = scores_.find(std::string(text.substr(symbols[left].begin, size)));
    if (it != scores_.end()) agenda.push({it->second, left, right, size});
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    consider(static_cast<int64_t>(i), static_cast<int64_t>(i + 1));

  auto count = static_cast<int64_t>(symbols.size());
  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol &l = symbols[top.left], &r = symbols[top.right];
    if (l.size == 0 || r.size == 0 || l.size + r.size != top.size) continue;  // stale
    if (rng.uniform(0.0f, 1.0f) < dropout) continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = top.left;
    --count;
    consider(l.prev, top.left);
    consider(top.left, l.next);
  }
  return count;
}

}  // namespace transduce::testing
