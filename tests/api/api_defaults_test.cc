// The public API's translation options default to what `transduce translate` and the library
// default to (the public header cannot include the library's, so the defaults are written twice:
// this holds them together), and what its input limit does.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "decode/search_options.h"
#include "decode/translator.h"
#include "support/random_model.h"
#include "text/tokenizer.h"
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
  EXPECT_EQ(ours.max_input_len, library.search.max_input_len);
  EXPECT_EQ(nlohmann::json(ours.long_input),
            search_options_json(library.search, {"long_input"})["long_input"]);
}

// The public API's long_input and max_input_len do what translate's do: a sentence over the limit
// is refused naming it, or cut to its first pieces (two sentences sharing them translate alike);
// a value no surface takes is refused.
TEST(PublicApi, LongInputsAreRefusedOrCut) {
  const testing::RandomModelDir dir("transduce_api_long_input");
  const Tokenizer tokenizer(dir.vocab() + "/spm.model");
  api::Translator translator(dir.model());
  // Both start with "red dog", whose pieces end at a word boundary.
  const std::vector<std::string> two = {"red dog runs over the street", "red dog sat on a mat"};
  api::TranslateOptions o;
  o.beam = 2;
  o.max_input_len = static_cast<int64_t>(tokenizer.encode("red dog").size());
  try {
    translator.translate(two, o);
    ADD_FAILURE() << "a sentence over max_input_len was translated";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: "), std::string::npos) << e.what();
    EXPECT_NE(
        std::string(e.what()).find(fmt::format("more than max_input_len {}", o.max_input_len)),
        std::string::npos)
        << e.what();
  }
  o.long_input = "truncate";
  const auto cut = translator.translate(two, o);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0][0].text, cut[1][0].text);
  // Alike to rounding: rows of one batch may take different kernel paths.
  EXPECT_NEAR(cut[0][0].score, cut[1][0].score, 1e-5 * std::abs(cut[1][0].score));
  EXPECT_EQ(cut[0][0].text, translator.translate({"red dog"}, o)[0][0].text);
  o.long_input = "cut";
  EXPECT_THROW(translator.translate(two, o), std::exception);
}

}  // namespace
}  // namespace transduce
