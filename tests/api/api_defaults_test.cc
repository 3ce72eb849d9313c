// The public API's translation options default to what `transduce translate` and the library
// default to (the public header cannot include the library's, so the defaults are written twice:
// this holds them together).
#include <gtest/gtest.h>

#include "decode/translator.h"
#include "transduce/transduce.h"

namespace transduce {
namespace {

TEST(PublicApi, TranslateOptionsDefaultAsTheLibrary) {
  const api::TranslateOptions ours;
  const TranslateOptions library;
  EXPECT_EQ(ours.beam, library.search.beam);
  EXPECT_EQ(ours.alpha, library.search.alpha);
  EXPECT_EQ(ours.nbest, library.search.nbest);
  EXPECT_EQ(ours.max_len_a, library.search.max_len_a);
  EXPECT_EQ(ours.max_len_b, library.search.max_len_b);
  EXPECT_EQ(ours.batch_tokens, library.batch_tokens);
}

}  // namespace
}  // namespace transduce
