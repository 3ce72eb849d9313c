// The parser's vocabulary (tree symbols among the word pieces) and the decoding constraint: it
// never bans the treebank's own trees, every walk it allows ends in a tree needing no repair, and
// on small cases it allows exactly the well-formed sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "parse/linearize.h"
#include "parse/tree_constraint.h"
#include "parse/tree_data.h"
#include "parse/tree_vocab.h"
#include "support/shared_data.h"
#include "support/toy_corpus.h"
#include "text/special_ids.h"
#include "text/tokenizer.h"

namespace transduce::parse {
namespace {

// A vocabulary trained on the sample's training words with its tree symbols.
class SampleVocab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("tree_vocab");
    trees_ = new std::vector<Tree>(
        read_normalised_trees(testing::shared_data_file("ptb-sample/train.trees")));
    std::ofstream words(dir_->path() + "/words.txt");
    for (const Tree& t : *trees_) {
      for (const std::string& w : t.words()) words << escape_word(w) << ' ';
      words << '\n';
    }
    words.close();
    Tokenizer::train({dir_->path() + "/words.txt"}, 2000, "bpe", dir_->path() + "/spm", 2, 0,
                     tree_symbols(*trees_));
    tokenizer_ = new Tokenizer(dir_->path() + "/spm.model");
    vocab_ = new TreeVocab(*tokenizer_);
  }
  static void TearDownTestSuite() {
    delete vocab_;
    delete tokenizer_;
    delete trees_;
    delete dir_;
  }

  static testing::TempDir* dir_;
  static std::vector<Tree>* trees_;
  static Tokenizer* tokenizer_;
  static TreeVocab* vocab_;
};
testing::TempDir* SampleVocab::dir_ = nullptr;
std::vector<Tree>* SampleVocab::trees_ = nullptr;
Tokenizer* SampleVocab::tokenizer_ = nullptr;
TreeVocab* SampleVocab::vocab_ = nullptr;

std::vector<float> uniform_row(int64_t n) {
  return std::vector<float>(static_cast<size_t>(n), -1.0f);
}

TEST_F(SampleVocab, SymbolsArePiecesOfTheirOwn) {
  const std::vector<std::string> symbols = tree_symbols(*trees_);
  EXPECT_EQ(symbols.front(), "XX");
  // The slot, two brackets a label and a symbol a tag: the sample has 26 labels and 45 tags.
  EXPECT_EQ(vocab_->bracket_ids().size(), 2u * 26u);
  EXPECT_EQ(vocab_->tag_ids().size(), 45u);
  EXPECT_EQ(vocab_->bracket_ids().size() + vocab_->tag_ids().size() + 1, symbols.size());
  for (int32_t id : vocab_->tag_ids()) {
    EXPECT_EQ(tokenizer_->piece(id), tag_symbol(vocab_->tag_name(id)));
    EXPECT_EQ(vocab_->tag_id(vocab_->tag_name(id)), id);
  }
  EXPECT_EQ(vocab_->tag_id("NN"), tokenizer_->piece_id("{NN}"));
  EXPECT_EQ(vocab_->tag_id("-LRB-"), tokenizer_->piece_id("{-LRB-}"));
  EXPECT_EQ(vocab_->tag_id(","),
            tokenizer_->piece_id("{%2C}"));  // SentencePiece's lists split at commas
  EXPECT_EQ(tag_symbol("a%b,c"), "{a%25b%2Cc}");
  EXPECT_EQ(vocab_->tag_id("NOSUCHTAG"), -1);
  for (const std::string& s : symbols) {
    const int32_t id = tokenizer_->piece_id(s);
    ASSERT_GE(id, 0) << s;
    EXPECT_NE(vocab_->kind(id), TreeVocab::kText) << s;
  }
  // Words stay words: a sentence encodes into text pieces only.
  for (int32_t id : encode_words(*tokenizer_, {"The", "(", "parser", ")", "works"}).pieces)
    EXPECT_EQ(vocab_->kind(id), TreeVocab::kText) << tokenizer_->piece(id);
  EXPECT_EQ(escape_word("("), "-LRB-");
  EXPECT_EQ(escape_word("f(x)"), "f-LRB-x-RRB-");
  EXPECT_EQ(escape_word("}"), "-RCB-");
}

constexpr TreeScheme kSchemes[] = {TreeScheme::kPlaceholder, TreeScheme::kWords,
                                   TreeScheme::kTagged, TreeScheme::kTaggedAfter};

// The constraint for a scheme, as the parser makes it.
TreeConstraint constraint_for(const TreeVocab& vocab, TreeScheme scheme, int64_t max_opens,
                              bool any_word = false) {
  return TreeConstraint(vocab, max_opens, any_word, 0.0f, scheme);
}

TEST_F(SampleVocab, EncodesAndDecodesEveryLinearisedTree) {
  for (TreeScheme scheme : kSchemes) {
    for (const Tree& t : *trees_) {
      std::vector<Item> items = linearize(t);
      const EncodedWords words = encode_words(*tokenizer_, t.words());
      const auto ids = vocab_->encode(items, scheme, words);
      ASSERT_TRUE(ids.has_value()) << to_string(t);
      // Only the tagged schemes write, and so give back, the words' tags.
      if (!scheme_has_tags(scheme))
        for (Item& item : items)
          if (item.kind == Item::kSlot) item.label.clear();
      EXPECT_EQ(vocab_->decode(*ids, scheme), items) << scheme_name(scheme);
      // The words are there as slots, or as their pieces in order; with tags, each word's tag
      // comes right before its first piece, or right after its last.
      std::vector<int32_t> text, tags;
      for (size_t i = 0; i < ids->size(); ++i) {
        const int32_t id = (*ids)[i];
        if (vocab_->kind(id) == TreeVocab::kTag) {
          tags.push_back(id);
          const bool after = scheme == TreeScheme::kTaggedAfter;
          ASSERT_LT(after ? 0 : i + 1, after ? i : ids->size());
          // Between two words: no piece out yet, or the pieces of whole words.
          EXPECT_TRUE((text.empty() && !after) ||
                      std::find(words.word_ends.begin(), words.word_ends.end(),
                                static_cast<int64_t>(text.size())) != words.word_ends.end());
          EXPECT_EQ(vocab_->kind((*ids)[after ? i - 1 : i + 1]), TreeVocab::kText);
        } else if (!vocab_->bracket(id)) {
          text.push_back(id);
        }
      }
      EXPECT_EQ(text, vocab_->target_words(scheme, words).pieces);
      if (scheme != TreeScheme::kPlaceholder) {
        EXPECT_EQ(text, words.pieces);
      }
      if (scheme_has_tags(scheme)) {
        ASSERT_EQ(tags.size(), t.tags().size());
        for (size_t w = 0; w < tags.size(); ++w) EXPECT_EQ(vocab_->tag_name(tags[w]), t.tags()[w]);
      } else {
        EXPECT_TRUE(tags.empty());
      }
    }
  }
  std::string missing_tag;
  EXPECT_FALSE(vocab_
                   ->encode({{Item::kSlot, "NOSUCHTAG"}}, TreeScheme::kTagged,
                            encode_words(*tokenizer_, {"the"}), &missing_tag)
                   .has_value());
  EXPECT_EQ(missing_tag, "{NOSUCHTAG}");
  std::string missing;
  EXPECT_FALSE(
      vocab_->encode({{Item::kOpen, "NOSUCHLABEL"}}, TreeScheme::kPlaceholder, {}, &missing)
          .has_value());
  EXPECT_EQ(missing, "NOSUCHLABEL");
  // Word pieces where slots belong read as slots; EOS and padding are skipped.
  const EncodedWords two = encode_words(*tokenizer_, {"the", "Vinken"});
  std::vector<int32_t> ids = two.pieces;
  ids.push_back(kEosId);
  ids.push_back(kPadId);
  EXPECT_EQ(vocab_->decode(ids, TreeScheme::kPlaceholder).size(), two.pieces.size());
  // In words, a slot is a word's run of pieces.
  ASSERT_GT(two.pieces.size(), 2u) << "Vinken should take more than one piece";
  EXPECT_EQ(vocab_->decode(ids, TreeScheme::kWords),
            (std::vector<Item>{{Item::kSlot, {}}, {Item::kSlot, {}}}));
  // In tagged, a tag opens a slot with that tag, which takes the pieces after it; pieces without
  // a tag before them make a slot without one, as in words.
  const int32_t dt = vocab_->tag_id("DT"), nnp = vocab_->tag_id("NNP");
  std::vector<int32_t> tagged{dt};
  tagged.insert(tagged.end(), two.pieces.begin(), two.pieces.end());
  EXPECT_EQ(vocab_->decode(tagged, TreeScheme::kTagged),
            (std::vector<Item>{{Item::kSlot, "DT"}, {Item::kSlot, {}}}));
  tagged = {dt, two.pieces[0], nnp};
  tagged.insert(tagged.end(), two.pieces.begin() + 1, two.pieces.end());
  EXPECT_EQ(vocab_->decode(tagged, TreeScheme::kTagged),
            (std::vector<Item>{{Item::kSlot, "DT"}, {Item::kSlot, "NNP"}}));
  // In tagged-after, the words are slots as in words and a tag labels the slot before it; a tag
  // after no word (first, or after a bracket) is dropped.
  tagged = {dt, two.pieces[0], nnp};
  tagged.insert(tagged.end(), two.pieces.begin() + 1, two.pieces.end());
  tagged.push_back(vocab_->bracket_ids()[0]);
  tagged.push_back(dt);
  EXPECT_EQ(vocab_->decode(tagged, TreeScheme::kTaggedAfter),
            (std::vector<Item>{{Item::kSlot, "NNP"},
                               {Item::kSlot, {}},
                               vocab_->decode({vocab_->bracket_ids()[0]}, TreeScheme::kWords)[0]}));
}

TEST_F(SampleVocab, WordPiecesPerWordAreTheSentencesPieces) {
  for (size_t i = 0; i < 200; ++i) {
    const std::vector<std::string> words = (*trees_)[i].words();
    const EncodedWords enc = encode_words(*tokenizer_, words);
    std::string line;
    for (const std::string& w : words) {
      if (!line.empty()) line += ' ';
      line += escape_word(w);
    }
    EXPECT_EQ(enc.pieces, tokenizer_->encode(line));
    ASSERT_EQ(enc.word_ends.size(), words.size());
    EXPECT_EQ(enc.word_ends.back(), static_cast<int64_t>(enc.pieces.size()));
  }
}

TEST(TreeVocabErrors, RefusesAVocabularyWithoutTreeSymbols) {
  testing::TempDir dir("tree_vocab_plain");
  testing::write_toy_corpus(dir.path());
  ASSERT_EQ(testing::make_toy_vocab(dir.path()), "");
  const Tokenizer plain(dir.path() + "/vocab/spm.model");
  try {
    TreeVocab v(plain);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.path() +
                  "/vocab/spm.model: not a parsing vocabulary (no 'XX' symbol): make it with "
                  "`transduce vocab --trees`");
  }
}

TEST_F(SampleVocab, TheConstraintNeverBansATreebankTree) {
  const int32_t stray = encode_words(*tokenizer_, {"zebra"}).pieces[0];
  for (TreeScheme scheme : kSchemes) {
    // The tightest limit on opening brackets in a row that the treebank allows.
    const TreeConstraint constraint = constraint_for(*vocab_, scheme, max_opens_in_a_row(*trees_));
    for (const Tree& t : *trees_) {
      const EncodedWords words = encode_words(*tokenizer_, t.words());
      const EncodedWords target = vocab_->target_words(scheme, words);
      const std::vector<int32_t> gold = *vocab_->encode(linearize(t), scheme, words);
      const int64_t max_len = static_cast<int64_t>(gold.size());  // as tight as it can be
      for (size_t step = 0; step <= gold.size(); ++step) {
        std::vector<float> row = uniform_row(vocab_->size());
        constraint.apply(std::span(gold.data(), step), target, max_len, row.data());
        const int32_t next = step < gold.size() ? gold[step] : kEosId;
        ASSERT_TRUE(std::isfinite(row[next])) << to_string(t) << " at step " << step;
        // A piece of no word of the sentence is always banned.
        if (std::find(words.pieces.begin(), words.pieces.end(), stray) == words.pieces.end()) {
          ASSERT_FALSE(std::isfinite(row[stray]));
        }
      }
    }
  }
}

TEST_F(SampleVocab, EveryWalkTheConstraintAllowsIsATreeOverTheWords) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t max_opens = trial % 3;  // none, 1 or 2 in a row
    const TreeScheme scheme = kSchemes[(trial / 3) % std::size(kSchemes)];
    const TreeConstraint constraint = constraint_for(*vocab_, scheme, max_opens, trial % 4 < 2);
    const std::vector<std::string> sentence = (*trees_)[rng() % trees_->size()].words();
    const std::vector<std::string> w(
        sentence.begin(), sentence.begin() + 1 + rng() % std::min<size_t>(30, sentence.size()));
    const EncodedWords words = encode_words(*tokenizer_, w);
    const EncodedWords target = vocab_->target_words(scheme, words);
    // The fewest tokens the words take: their pieces, and a tag each in the tagged schemes.
    const int64_t pieces = static_cast<int64_t>(target.pieces.size()) +
                           (scheme_has_tags(scheme) ? static_cast<int64_t>(w.size()) : 0);
    const int64_t max_len = pieces + static_cast<int64_t>(rng() % (2 * pieces + 10));
    std::vector<int32_t> prefix;
    for (;;) {
      std::vector<float> row = uniform_row(vocab_->size());
      constraint.apply(prefix, target, max_len, row.data());
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab_->size(); ++id)
        if (std::isfinite(row[id])) allowed.push_back(id);
      ASSERT_FALSE(allowed.empty()) << "a dead end at step " << prefix.size();
      const int32_t next = allowed[rng() % allowed.size()];
      if (next == kEosId) break;
      prefix.push_back(next);
      ASSERT_LE(static_cast<int64_t>(prefix.size()), max_len);
    }
    Repairs r;
    const Tree tree = restore(vocab_->decode(prefix, scheme), w, &r);
    ASSERT_EQ(r.total(), 0) << "trial " << trial;
    // Restoring loses nothing: the tree linearises back to the walk.
    ASSERT_EQ(*vocab_->encode(linearize(tree), scheme, words), prefix) << "trial " << trial;
    if (max_opens > 0) {
      ASSERT_LE(max_opens_in_a_row({tree}), max_opens) << "trial " << trial;
    }
  }
}

// With any_word, the search weighs "a word here" (the mass of every piece that is neither a
// bracket, EOS nor, in tagged-after, a tag) against the brackets, and the rest of a word's pieces
// cost nothing; the rest of the row is as without it.
TEST_F(SampleVocab, AnyWordScoresTheNextWordByTheMassOfAllWordPieces) {
  for (TreeScheme scheme : {TreeScheme::kWords, TreeScheme::kTaggedAfter}) {
    const TreeConstraint exact(*vocab_, 6, false, 0.0f, scheme),
        any(*vocab_, 6, true, 0.0f, scheme);
    const Tree& t = (*trees_)[0];  // "Pierre Vinken , ...": "Pierre" takes several pieces
    const EncodedWords words = encode_words(*tokenizer_, t.words());
    ASSERT_GT(words.word_ends[0], 1);
    const std::vector<int32_t> gold = *vocab_->encode(linearize(t), scheme, words);
    std::mt19937_64 rng(2);
    std::vector<float> logits(static_cast<size_t>(vocab_->size()));
    for (float& x : logits) x = static_cast<float>(rng() % 1000) / 100.0f;
    // PAD and BOS, which a trained model never predicts and the search bans, have no mass.
    logits[kPadId] = logits[kBosId] = -std::numeric_limits<float>::infinity();
    double total = 0;
    for (float x : logits) total += std::exp(static_cast<double>(x));
    std::vector<float> logp(logits.size());
    for (size_t i = 0; i < logp.size(); ++i)
      logp[i] = logits[i] - static_cast<float>(std::log(total));
    double word_mass = 0;
    for (int32_t id = 0; id < vocab_->size(); ++id)
      if (!vocab_->bracket(id) && id != kEosId && id != kPadId && id != kBosId &&
          !(scheme == TreeScheme::kTaggedAfter && vocab_->kind(id) == TreeVocab::kTag))
        word_mass += std::exp(static_cast<double>(logp[static_cast<size_t>(id)]));
    // gold: "(S (NP (NP ▁P ier re ..." : after the three brackets, the first piece of "Pierre".
    for (size_t step : {size_t{3}, size_t{4}}) {
      std::vector<float> a = logp, e = logp;
      any.apply(std::span(gold.data(), step), words, 1000, a.data());
      exact.apply(std::span(gold.data(), step), words, 1000, e.data());
      const int32_t next = gold[step];
      ASSERT_FALSE(vocab_->bracket(next));
      EXPECT_FLOAT_EQ(e[next], logp[next]);
      if (step == 3) {
        EXPECT_NEAR(a[next], std::log(word_mass), 1e-4);  // a word begins: any word's mass
      } else {
        EXPECT_EQ(a[next], 0.0f);  // inside the word: its next piece is certain
      }
      for (int32_t id = 0; id < vocab_->size(); ++id) {
        if (id != next) {
          EXPECT_EQ(a[id], e[id]) << id;
        }
      }
    }
  }
}

// The bracket bonus raises every allowed opening bracket by the bonus, capped at 0, and leaves
// everything else (closing brackets, words, EOS, what is banned) as it was.
TEST_F(SampleVocab, TheBracketBonusRaisesOpeningBracketsOnly) {
  const float bonus = 0.75f;
  const TreeConstraint plain(*vocab_, 6, true), raised(*vocab_, 6, true, bonus);
  const Tree& t = (*trees_)[1];
  const EncodedWords words = encode_words(*tokenizer_, t.words());
  const std::vector<int32_t> gold = *vocab_->encode(linearize(t), TreeScheme::kWords, words);
  std::mt19937_64 rng(3);
  int raised_seen = 0, capped_seen = 0;
  for (size_t step = 0; step < gold.size(); ++step) {
    std::vector<float> logp(static_cast<size_t>(vocab_->size()));
    // Some opening brackets within the bonus of 0, so that the cap is reached too.
    for (float& x : logp) x = -static_cast<float>(rng() % 300) / 100.0f;
    std::vector<float> p = logp, r = logp;
    plain.apply(std::span(gold.data(), step), words, 1000, p.data());
    raised.apply(std::span(gold.data(), step), words, 1000, r.data());
    for (int32_t id = 0; id < vocab_->size(); ++id) {
      if (vocab_->kind(id) == TreeVocab::kOpening && std::isfinite(p[id])) {
        EXPECT_FLOAT_EQ(r[id], std::min(p[id] + bonus, 0.0f)) << step << " " << id;
        ++raised_seen;
        capped_seen += p[id] + bonus > 0;
      } else {
        EXPECT_EQ(r[id], p[id]) << step << " " << id;
      }
    }
  }
  EXPECT_GT(raised_seen, 100);
  EXPECT_GT(capped_seen, 10);
}

// Well-formed sequences by definition: balanced, each closing bracket matching the innermost open
// one, no constituent without a slot, exactly `words` slots; and with `max_opens` > 0, never more
// opening brackets in a row.
bool well_formed(const std::vector<Item>& items, int words, int max_opens) {
  std::vector<std::pair<std::string, bool>> open;  // label, holds a word
  int slots = 0, run = 0;
  for (const Item& it : items) {
    run = it.kind == Item::kOpen ? run + 1 : 0;
    if (max_opens > 0 && run > max_opens) return false;
    if (it.kind == Item::kOpen) {
      open.push_back({it.label, false});
    } else if (it.kind == Item::kClose) {
      if (open.empty() || open.back().first != it.label || !open.back().second) return false;
      open.pop_back();
      if (!open.empty()) open.back().second = true;
    } else {
      ++slots;
      if (!open.empty()) open.back().second = true;
    }
  }
  return open.empty() && slots == words;
}

// Every sequence the constraint lets a walk end on (EOS allowed after it), over `symbols`, by
// depth-first search; `check` sees each allowed symbol's score.
std::set<std::vector<int32_t>> allowed_walks(
    const TreeConstraint& constraint, int64_t vocab_size, const std::vector<int32_t>& symbols,
    const EncodedWords& target, int max_len,
    const std::function<void(int32_t, float)>& check = nullptr) {
  std::set<std::vector<int32_t>> allowed;
  std::vector<int32_t> prefix;
  std::function<void()> walk = [&] {
    std::vector<float> row = uniform_row(vocab_size);
    constraint.apply(prefix, target, max_len, row.data());
    if (std::isfinite(row[kEosId])) allowed.insert(prefix);
    for (int32_t id : symbols) {
      if (!std::isfinite(row[id])) continue;
      if (check) check(id, row[id]);
      prefix.push_back(id);
      walk();
      prefix.pop_back();
    }
  };
  walk();
  return allowed;
}

// Every sequence of `symbols` of at most `max_len`, kept when `keep` says so.
std::set<std::vector<int32_t>> sequences_where(
    const std::vector<int32_t>& symbols, int max_len,
    const std::function<bool(const std::vector<int32_t>&)>& keep) {
  std::set<std::vector<int32_t>> kept;
  std::vector<int32_t> seq;
  std::function<void()> all = [&] {
    if (keep(seq)) kept.insert(seq);
    if (static_cast<int>(seq.size()) == max_len) return;
    for (int32_t id : symbols) {
      seq.push_back(id);
      all();
      seq.pop_back();
    }
  };
  all();
  return kept;
}

TEST(TreeConstraintExact, AllowsExactlyTheWellFormedSequencesOnSmallCases) {
  testing::TempDir dir("tree_constraint_small");
  {
    std::ofstream text(dir.path() + "/text.txt");
    for (int i = 0; i < 50; ++i) text << "a b c d e f g h\n";
  }
  Tokenizer::train({dir.path() + "/text.txt"}, 24, "bpe", dir.path() + "/spm", 1, 0,
                   {"XX", "(A", "(B", ")A", ")B"});
  const Tokenizer tok(dir.path() + "/spm.model");
  const TreeVocab vocab(tok);
  std::vector<int32_t> symbols = vocab.bracket_ids();
  symbols.push_back(vocab.slot_id());
  ASSERT_EQ(symbols.size(), 5u);
  for (int max_opens : {0, 1, 2}) {
    const TreeConstraint constraint(vocab, max_opens);
    for (int words = 1; words <= 3; ++words) {
      for (int max_len = words; max_len <= 7; ++max_len) {
        EncodedWords target;
        for (int w = 1; w <= words; ++w) {
          target.pieces.push_back(vocab.slot_id());
          target.word_ends.push_back(w);
        }
        const auto allowed = allowed_walks(constraint, vocab.size(), symbols, target, max_len);
        const auto valid = sequences_where(symbols, max_len, [&](const std::vector<int32_t>& seq) {
          return well_formed(vocab.decode(seq, TreeScheme::kPlaceholder), words, max_opens);
        });
        EXPECT_EQ(allowed, valid) << words << " words, at most " << max_len << " tokens, "
                                  << max_opens << " opening brackets in a row";
        EXPECT_FALSE(valid.empty());
      }
    }
  }
}

// The tagged schemes on small cases: a sequence is well-formed when every word is a tag followed by
// the word's piece (tagged-after: the piece followed by a tag), and the brackets around them are as
// above.
TEST(TreeConstraintExact, WithTagsAllowsExactlyTheWellFormedSequencesOnSmallCases) {
  testing::TempDir dir("tree_constraint_tags");
  {
    std::ofstream text(dir.path() + "/text.txt");
    for (int i = 0; i < 50; ++i) text << "a b c d e f g h\n";
  }
  Tokenizer::train({dir.path() + "/text.txt"}, 26, "bpe", dir.path() + "/spm", 1, 0,
                   {"XX", "(A", "(B", ")A", ")B", "{T}", "{U}"});
  const Tokenizer tok(dir.path() + "/spm.model");
  const TreeVocab vocab(tok);
  ASSERT_EQ(vocab.tag_ids().size(), 2u);
  // Every word is the one piece `a`.
  const int32_t piece = tok.piece_id(
      "\xE2\x96\x81"
      "a");
  ASSERT_GE(piece, 0);
  std::vector<int32_t> symbols = vocab.bracket_ids();
  symbols.insert(symbols.end(), vocab.tag_ids().begin(), vocab.tag_ids().end());
  symbols.push_back(piece);
  // The sequence as items when each word is a tag and a piece, in the scheme's order.
  const auto tagged_items = [&](const std::vector<int32_t>& seq,
                                TreeScheme scheme) -> std::optional<std::vector<Item>> {
    const bool after = scheme == TreeScheme::kTaggedAfter;
    const int32_t first = after ? piece : -1;  // what a word begins with; -1: any tag
    std::vector<Item> items;
    for (size_t i = 0; i < seq.size(); ++i) {
      const TreeVocab::Kind kind = vocab.kind(seq[i]);
      if (after ? seq[i] == first : kind == TreeVocab::kTag) {
        if (i + 1 == seq.size()) return std::nullopt;
        const int32_t second = seq[i + 1];
        if (after ? vocab.kind(second) != TreeVocab::kTag : second != piece) return std::nullopt;
        items.push_back({Item::kSlot, vocab.tag_name(after ? second : seq[i])});
        ++i;
      } else if (vocab.bracket(seq[i])) {
        items.push_back(vocab.decode({seq[i]}, TreeScheme::kTagged)[0]);
      } else {
        return std::nullopt;
      }
    }
    return items;
  };
  for (TreeScheme scheme : {TreeScheme::kTagged, TreeScheme::kTaggedAfter}) {
    for (int max_opens : {0, 1}) {
      for (bool any_word : {false, true}) {
        const TreeConstraint constraint(vocab, max_opens, any_word, 0.0f, scheme);
        for (int words = 1; words <= 2; ++words) {
          EncodedWords target;
          for (int w = 1; w <= words; ++w) {
            target.pieces.push_back(piece);
            target.word_ends.push_back(w);
          }
          for (int max_len = 2 * words; max_len <= 6; ++max_len) {
            // The scores: a tag's and a bracket's own; with any_word, a word's piece certain after
            // its tag (tagged-after's first piece is any word's mass: the AnyWord test's).
            const auto allowed = allowed_walks(
                constraint, vocab.size(), symbols, target, max_len, [&](int32_t id, float score) {
                  if (id == piece && any_word && scheme == TreeScheme::kTaggedAfter) return;
                  EXPECT_EQ(score, id == piece && any_word ? 0.0f : -1.0f);
                });
            const auto valid =
                sequences_where(symbols, max_len, [&](const std::vector<int32_t>& seq) {
                  const auto items = tagged_items(seq, scheme);
                  return items && well_formed(*items, words, max_opens);
                });
            EXPECT_EQ(allowed, valid)
                << scheme_name(scheme) << ", " << words << " words, at most " << max_len
                << " tokens, " << max_opens << " opening brackets in a row";
            EXPECT_FALSE(valid.empty());
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace transduce::parse
