// Trees to bracket sequences and back: the identity on the treebank sample, each repair on its own,
// and restoring random malformed sequences, which must always give a tree over exactly the words.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "parse/linearize.h"
#include "parse/tree.h"
#include "parse/tree_data.h"
#include "support/shared_data.h"

namespace transduce::parse {
namespace {

std::vector<Item> items_of(const std::string& text) {
  std::vector<Item> items;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = std::min(text.find(' ', i), text.size());
    if (end > i) items.push_back(item_from_text(text.substr(i, end - i)));
    i = end + 1;
  }
  return items;
}

std::vector<std::string> words_of(int n) {
  std::vector<std::string> w;
  for (int i = 0; i < n; ++i) w.push_back(fmt::format("w{}", i + 1));
  return w;
}

// The tree with every preterminal's tag replaced by the slot, as restoring gives it back.
Tree with_slot_tags(Tree t) {
  if (t.preterminal()) {
    t.label = std::string(kSlot);
    return t;
  }
  for (Tree& c : t.children) c = with_slot_tags(c);
  return t;
}

// Well-formed: every constituent holds a word, preterminals have a tag and a word, and the
// printed tree reads back as the same tree.
void expect_well_formed(const Tree& top, const std::vector<std::string>& words) {
  ASSERT_EQ(top.label, "TOP");
  EXPECT_EQ(top.words(), words);
  std::vector<const Tree*> todo;
  for (const Tree& c : top.children) todo.push_back(&c);
  while (!todo.empty()) {
    const Tree* t = todo.back();
    todo.pop_back();
    EXPECT_FALSE(t->label.empty());
    if (t->preterminal()) {
      EXPECT_FALSE(t->word.empty());
      continue;
    }
    for (const Tree& c : t->children) todo.push_back(&c);
  }
  if (!top.children.empty()) {
    const std::vector<Tree> back = read_trees(to_string(top), "restored");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0], top);
  }
}

TEST(Linearize, WritesTheBracketsWithWordSlots) {
  const std::vector<Tree> t = read_trees(
      "((S (NP-SBJ (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. .)))", "t");
  EXPECT_EQ(linearized_text(normalise(t[0])), "(S (NP XX XX )NP (VP XX (NP XX )NP )VP XX )S");
  EXPECT_EQ(item_text(Item{Item::kOpen, "NP"}), "(NP");
  EXPECT_EQ(item_text(Item{Item::kClose, "NP"}), ")NP");
  EXPECT_EQ(item_from_text(")VP"), (Item{Item::kClose, "VP"}));
  EXPECT_EQ(item_from_text("XX").kind, Item::kSlot);
  EXPECT_EQ(item_from_text("(").kind, Item::kSlot);  // not a bracket token
  // Two opening brackets before "Ms.", one before "plays" and "Elianti", none elsewhere.
  EXPECT_EQ(max_opens_in_a_row({normalise(t[0])}), 2);
  const std::vector<Tree> deep = read_trees("((S (NP (NP (QP (CD 3)))) (VP (VB go))))", "t");
  EXPECT_EQ(max_opens_in_a_row({normalise(t[0]), normalise(deep[0])}), 4);
}

// Slots carry the words' tags, and restoring gives them back; slots without a tag (what the xx and
// words schemes decode to) give XX.
TEST(Linearize, RestoringIsTheIdentityOnEveryTreeOfTheSample) {
  int64_t trees = 0;
  for (const char* split : {"train", "dev", "test"}) {
    for (const Tree& t : read_normalised_trees(
             testing::shared_data_file(std::string("ptb-sample/") + split + ".trees"))) {
      Repairs r;
      std::vector<Item> items = linearize(t);
      ASSERT_EQ(restore(items, t.words(), &r), t) << split << ": " << to_string(t);
      EXPECT_EQ(r.total(), 0);
      for (Item& item : items)
        if (item.kind == Item::kSlot) item.label.clear();
      ASSERT_EQ(restore(items, t.words(), &r), with_slot_tags(t)) << split << ": " << to_string(t);
      ++trees;
    }
  }
  EXPECT_EQ(trees, 3396 + 273 + 245);
}

struct RepairCase {
  const char* items;
  int words;
  const char* tree;
  Repairs repairs;
};

TEST(Linearize, EachRepairOnItsOwn) {
  auto make = [](int64_t unclosed, int64_t unopened, int64_t mismatched, int64_t extra,
                 int64_t missing, int64_t empty) {
    Repairs r;
    r.unclosed = unclosed;
    r.unopened = unopened;
    r.mismatched = mismatched;
    r.extra_slots = extra;
    r.missing_words = missing;
    r.empty = empty;
    return r;
  };
  const std::vector<RepairCase> cases = {
      {"(S (NP XX )NP (VP XX )VP )S", 2, "(TOP (S (NP (XX w1)) (VP (XX w2))))",
       make(0, 0, 0, 0, 0, 0)},
      // Still open at the end: closed there.
      {"(S (NP XX )NP (VP XX", 2, "(TOP (S (NP (XX w1)) (VP (XX w2))))", make(2, 0, 0, 0, 0, 0)},
      // A closing bracket with nothing open: dropped.
      {")NP (S XX XX )S )S", 2, "(TOP (S (XX w1) (XX w2)))", make(0, 2, 0, 0, 0, 0)},
      // A closing bracket of another label closes the innermost constituent, keeping its label.
      {"(S (NP XX )VP XX )S", 2, "(TOP (S (NP (XX w1)) (XX w2)))", make(0, 0, 1, 0, 0, 0)},
      // Slots beyond the words: dropped (the constituent they would fill too).
      {"(S XX XX (NP XX )NP )S", 2, "(TOP (S (XX w1) (XX w2)))", make(0, 0, 0, 1, 0, 1)},
      // Words without a slot: at the end of the last constituent of the top level.
      {"(S (NP XX )NP )S", 3, "(TOP (S (NP (XX w1)) (XX w2) (XX w3)))", make(0, 0, 0, 0, 2, 0)},
      // ... but not past a bare word on the top level, which would reorder the words.
      {"(S XX )S XX", 3, "(TOP (S (XX w1)) (XX w2) (XX w3))", make(0, 0, 0, 0, 1, 0)},
      // No constituent at all: the words go to the root.
      {"", 2, "(TOP (XX w1) (XX w2))", make(0, 0, 0, 0, 2, 0)},
      // Constituents without a word: dropped, nested ones counted one by one.
      {"(S (NP (ADJP )ADJP )NP XX )S", 1, "(TOP (S (XX w1)))", make(0, 0, 0, 0, 0, 2)},
      // Several top-level constituents stay side by side under the root.
      {"(NP XX )NP (VP XX )VP", 2, "(TOP (NP (XX w1)) (VP (XX w2)))", make(0, 0, 0, 0, 0, 0)},
      // No words: an empty root whatever came out.
      {"(S XX )S", 0, "", make(0, 0, 0, 1, 0, 1)},
  };
  for (const RepairCase& c : cases) {
    Repairs r;
    const Tree t = restore(items_of(c.items), words_of(c.words), &r);
    EXPECT_EQ(t.children.empty() ? "" : to_string(t), c.tree) << c.items;
    EXPECT_EQ(r.unclosed, c.repairs.unclosed) << c.items;
    EXPECT_EQ(r.unopened, c.repairs.unopened) << c.items;
    EXPECT_EQ(r.mismatched, c.repairs.mismatched) << c.items;
    EXPECT_EQ(r.extra_slots, c.repairs.extra_slots) << c.items;
    EXPECT_EQ(r.missing_words, c.repairs.missing_words) << c.items;
    EXPECT_EQ(r.empty, c.repairs.empty) << c.items;
  }
}

// Any sequence of brackets and slots, of any length, for any number of words: always a
// well-formed tree over exactly those words.
TEST(Linearize, RestoresRandomMalformedSequencesIntoTreesOverTheWords) {
  std::mt19937_64 rng(17);
  const std::vector<std::string> labels = {"S", "NP", "VP", "PP", "SBAR"};
  int64_t repaired = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int length = static_cast<int>(rng() % 40);
    const int words = static_cast<int>(rng() % 15);
    std::vector<Item> items;
    for (int i = 0; i < length; ++i) {
      const uint64_t r = rng() % 3;
      if (r == 2) {
        items.push_back({Item::kSlot, {}});
      } else {
        items.push_back({r == 0 ? Item::kOpen : Item::kClose, labels[rng() % labels.size()]});
      }
    }
    Repairs rep;
    const Tree t = restore(items, words_of(words), &rep);
    expect_well_formed(t, words_of(words));
    repaired += rep.total() > 0;
    if (::testing::Test::HasFailure()) {
      std::string shown;
      for (const Item& it : items) shown += item_text(it) + " ";
      FAIL() << "trial " << trial << ": " << shown << "with " << words << " words";
    }
  }
  EXPECT_GT(repaired, 15000);  // the generator mostly makes broken sequences
}

// Damaged linearisations of real trees: a few tokens deleted, duplicated or swapped.
TEST(Linearize, RestoresDamagedTreebankSequences) {
  std::mt19937_64 rng(3);
  const std::vector<Tree> trees =
      read_normalised_trees(testing::shared_data_file("ptb-sample/dev.trees"));
  for (int trial = 0; trial < 5000; ++trial) {
    const Tree& t = trees[rng() % trees.size()];
    std::vector<Item> items = linearize(t);
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0 && !items.empty(); --edits) {
      const size_t at = rng() % items.size();
      switch (rng() % 3) {
        case 0:
          items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
          break;
        case 1:
          items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), items[at]);
          break;
        default:
          std::swap(items[at], items[rng() % items.size()]);
      }
    }
    expect_well_formed(restore(items, t.words()), t.words());
    if (::testing::Test::HasFailure()) FAIL() << "trial " << trial;
  }
}

}  // namespace
}  // namespace transduce::parse
