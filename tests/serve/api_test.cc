// Reading translation requests: every malformed or out-of-limit request is refused with the HTTP
// status, a message naming the field (or the byte), and the limit it hit; good ones keep their
// sentences, their pieces and the search settings they ask for.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "serve/api.h"
#include "support/random_model.h"
#include "text/tokenizer.h"

namespace transduce {
namespace {

class Api : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::RandomModelDir("transduce_api");
    tokenizer_ = new Tokenizer(dir_->vocab() + "/spm.model");
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete dir_;
  }

  TranslateRequest parse(const std::string& body) {
    return parse_translate_request(body, *tokenizer_, limits_, defaults_);
  }
  // The refusal of `body`: its status, and that its message holds `words`.
  ApiError refusal(const std::string& body) {
    try {
      parse(body);
    } catch (const ApiError& e) {
      return e;
    }
    ADD_FAILURE() << "accepted: " << body;
    return ApiError(0, "");
  }

  static testing::RandomModelDir* dir_;
  static Tokenizer* tokenizer_;
  ServiceLimits limits_{/*max_body_bytes=*/1000, /*max_sentences=*/3, /*max_sentence_tokens=*/12,
                        /*max_beam=*/8};
  TranslateOptions defaults_;
};

testing::RandomModelDir* Api::dir_ = nullptr;
Tokenizer* Api::tokenizer_ = nullptr;

TEST_F(Api, GoodRequestsKeepTheirSentencesAndSettings) {
  TranslateRequest r = parse(R"({"text": ["red dog", "", "a cat runs"], "beam": 3,
                                 "alpha": 1.5, "nbest": 2, "attention": true})");
  ASSERT_EQ(r.text.size(), 3u);
  EXPECT_EQ(r.text[2], "a cat runs");
  EXPECT_EQ(r.sources[0], tokenizer_->encode("red dog"));
  EXPECT_TRUE(r.sources[1].empty());
  EXPECT_EQ(r.options.search.beam, 3);
  EXPECT_FLOAT_EQ(r.options.search.alpha, 1.5f);
  EXPECT_EQ(r.options.search.nbest, 2);
  EXPECT_TRUE(r.options.attention);

  r = parse(R"({"text": "the street"})");  // one sentence as a plain string; defaults
  ASSERT_EQ(r.text, std::vector<std::string>{"the street"});
  EXPECT_EQ(r.options.search.beam, defaults_.search.beam);
  EXPECT_FLOAT_EQ(r.options.search.alpha, defaults_.search.alpha);
  EXPECT_FALSE(r.options.attention);

  r = parse(R"({"text": [], "beam": 1})");
  EXPECT_TRUE(r.text.empty());
  EXPECT_EQ(r.options.search.beam, 1);

  r = parse("{\"text\": [\"Gr\u00fc\u00dfe \u4e16\u754c \\ud83d\\ude42\"], \"beam\": 2.0}");
  EXPECT_EQ(r.text[0], "Gr\u00fc\u00dfe \u4e16\u754c \U0001F642");  // escaped or not, the same
  EXPECT_FALSE(r.sources[0].empty());
  EXPECT_EQ(r.options.search.beam, 2);
}

// max_input_len and long_input, as in translate: a sentence over the limit is refused naming the
// limit that applied, or cut to its first pieces (one over the byte limit is cut to it first).
TEST_F(Api, LongInputsAreRefusedOrCut) {
  const std::string text = "red dog runs over the street a cat red dog runs over";
  const std::vector<int32_t> pieces = tokenizer_->encode(text);
  ASSERT_GT(pieces.size(), 12u);
  auto first = [](std::vector<int32_t> v, size_t n) {
    v.resize(n);
    return v;
  };
  nlohmann::json request = {{"text", text}, {"long_input", "truncate"}};
  EXPECT_EQ(parse(request.dump()).sources[0], first(pieces, 12));
  request["max_input_len"] = 3;
  EXPECT_EQ(parse(request.dump()).sources[0], first(pieces, 3));
  request.erase("long_input");
  ApiError e = refusal(request.dump());
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.limit, "max_input_len");
  EXPECT_EQ(e.max, 3);
  EXPECT_NE(std::string(e.what()).find(fmt::format(
                "\"text\"[0]: {} subword pieces, more than max_input_len 3", pieces.size())),
            std::string::npos)
      << e.what();
  // Within the limit, untouched; the limit itself is held to the server's.
  const std::vector<int32_t> short_pieces = tokenizer_->encode("red dog");
  EXPECT_EQ(
      parse(nlohmann::json{{"text", "red dog"}, {"max_input_len", short_pieces.size()}}.dump())
          .sources[0],
      short_pieces);
  e = refusal(nlohmann::json{{"text", "red"}, {"max_input_len", 13}}.dump());
  EXPECT_EQ(e.limit, "max_sentence_tokens");
  EXPECT_EQ(e.max, 12);
  EXPECT_NE(std::string(refusal(R"({"text": "a", "long_input": "cut"})").what())
                .find("\"long_input\" must be"),
            std::string::npos);
  // Over the byte limit (768 here): cut at the start of a character (the first é takes bytes
  // 768 and 769), then to 12 pieces.
  const std::string wide = std::string(767, 'a') + "\u00e9\u00e9";
  const TranslateRequest r =
      parse(nlohmann::json{{"text", wide}, {"long_input", "truncate"}}.dump());
  EXPECT_EQ(r.sources[0], first(tokenizer_->encode(std::string(767, 'a')), 12));
}

TEST_F(Api, MalformedJsonNamesWhereItBreaks) {
  const ApiError e = refusal(R"({"text": ["red dog")");
  EXPECT_EQ(e.status, 400);
  EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("line 1, column 20"), std::string::npos) << e.what();
  EXPECT_EQ(refusal("").status, 400);
  EXPECT_EQ(refusal("{\"text\": [\"\xff\"]}").status, 400);  // not UTF-8
}

TEST_F(Api, WrongTypesAndValuesNameTheField) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c :
       {Case{R"([1, 2])", "must be a JSON object, got an array"},
        Case{R"({})", "missing field \"text\""},
        Case{R"({"text": 5})", "\"text\" must be a string or an array"},
        Case{R"({"text": ["a", null]})", "\"text\"[1] must be a string, got null"},
        Case{R"({"text": "a", "beam": "4"})", "\"beam\" must be an integer"},
        Case{R"({"text": "a", "beam": 2.5})", "\"beam\" must be an integer"},
        Case{R"({"text": "a", "beam": 0})", "\"beam\" must be between 1 and 8"},
        Case{R"({"text": "a", "nbest": 5})", "nbest (5) must not exceed the beam (4)"},
        Case{R"({"text": "a", "sampling": "topk"})", "\"sampling\" must be \"none\""},
        Case{R"({"text": "a", "target_prefix": 3})",
             "\"target_prefix\" must be a string or an array"},
        Case{R"({"text": ["a", "b"], "target_prefix": ["x"]})",
             "\"target_prefix\" holds 1 prefixes for 2 texts"},
        Case{R"({"text": "a", "alpha": -1})", "\"alpha\" must be between 0"},
        Case{R"({"text": "a", "alpha": "x"})", "\"alpha\" must be a number"},
        Case{R"({"text": "a", "attention": 1})", "\"attention\" must be true"},
        Case{R"({"text": "a", "beams": 2})", "unknown field \"beams\""}}) {
    const ApiError e = refusal(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
        << c.body << " -> " << e.what();
    EXPECT_EQ(e.limit, c.body == std::string(R"({"text": "a", "beam": 0})") ? "max_beam" : "")
        << c.body;
  }
}

// Sampling may ask for more samples than the beam; the rows a sentence costs (samples,
// alternatives) are held to max_beam as the beam is. Prefixes come in pieces, one per text.
TEST_F(Api, SamplesAlternativesAndPrefixes) {
  TranslateRequest r =
      parse(R"({"text": ["red dog", "a cat"], "sampling": "topp:0.9", "nbest": 6, "seed": 3,
                "target_prefix": ["red", ""]})");
  EXPECT_EQ(r.options.search.nbest, 6);
  EXPECT_EQ(r.options.search.seed, 3);
  ASSERT_EQ(r.controls.size(), 2u);
  EXPECT_FALSE(r.controls[0].prefix.empty());
  EXPECT_TRUE(r.controls[1].prefix.empty());
  EXPECT_EQ(r.controls[1].id, 1u);
  r = parse(R"({"text": ["red dog", "a cat"], "constraints": [["dog", "red"], []]})");
  ASSERT_EQ(r.controls[0].constraints.size(), 2u);
  EXPECT_EQ(r.controls[0].constraints[0], tokenizer_->encode("dog"));
  EXPECT_TRUE(r.controls[1].constraints.empty());
  EXPECT_FALSE(r.options.alignment);
  EXPECT_TRUE(parse(R"({"text": "a", "alignment": true})").options.alignment);
  const ApiError many = refusal(R"({"text": "a", "alternatives": 9})");
  EXPECT_EQ(many.status, 400);
  EXPECT_EQ(many.limit, "max_beam");
  EXPECT_EQ(refusal(R"({"text": "a", "sampling": "topk:2", "nbest": 9})").limit, "max_beam");
}

TEST_F(Api, LimitsAreNamedInTheRefusal) {
  ApiError e = refusal(R"({"text": ["a", "b", "c", "d"]})");
  EXPECT_EQ(e.status, 413);
  EXPECT_EQ(e.limit, "max_sentences");
  EXPECT_EQ(e.max, 3);
  e = refusal(R"({"text": ["red dog", "red dog runs over the street a cat red dog runs over"]})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.limit, "max_sentence_tokens");
  EXPECT_EQ(e.max, 12);
  EXPECT_NE(std::string(e.what()).find("\"text\"[1]: "), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("this server takes at most 12"), std::string::npos)
      << e.what();
  // A sentence too long in bytes for 12 pieces (64 bytes a piece) is refused without splitting
  // it; one byte less is split, and refused for its pieces.
  const std::string a768(12 * 64, 'a');
  e = refusal(nlohmann::json{{"text", {"red", a768 + "a"}}}.dump());
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.limit, "max_sentence_tokens");
  EXPECT_NE(std::string(e.what()).find("\"text\"[1] is 769 bytes long; this server takes at most "
                                       "768 (64 bytes for each of max_sentence_tokens 12; "
                                       "long_input truncate would cut it)"),
            std::string::npos)
      << e.what();
  e = refusal(nlohmann::json{{"text", a768}}.dump());
  EXPECT_NE(std::string(e.what()).find("\"text\"[0]: "), std::string::npos) << e.what();
  e = refusal(R"({"text": "a", "beam": 9})");
  EXPECT_EQ(e.limit, "max_beam");
  EXPECT_EQ(e.max, 8);

  const nlohmann::json j = error_json(ApiError(413, "too big", "max_body_bytes", 1000));
  EXPECT_EQ(j["error"]["status"], 413);
  EXPECT_EQ(j["error"]["message"], "too big");
  EXPECT_EQ(j["error"]["limit"], "max_body_bytes");
  EXPECT_EQ(j["error"]["max"], 1000);
  EXPECT_FALSE(error_json(ApiError(400, "bad"))["error"].contains("limit"));
}

// Arrays and objects nest at most kMaxJsonDepth deep: deeper bodies are refused as soon as the
// parser gets there, before they are built (100,000 levels cost tens of MB otherwise).
TEST_F(Api, DeeplyNestedBodiesAreRefused) {
  const auto nested = [](int depth) {
    return R"({"text": "a", "x": )" + std::string(static_cast<size_t>(depth - 1), '[') +
           std::string(static_cast<size_t>(depth - 1), ']') + "}";
  };
  // At the limit the body is read, and refused for its unknown field.
  ApiError e = refusal(nested(kMaxJsonDepth));
  EXPECT_NE(std::string(e.what()).find("unknown field \"x\""), std::string::npos) << e.what();
  for (int depth : {kMaxJsonDepth + 1, 100000}) {
    e = refusal(nested(depth));
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(std::string(e.what()), "the body nests arrays and objects more than 16 deep")
        << depth;
  }
  e = refusal(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(std::string(e.what()), "the body nests arrays and objects more than 16 deep");
}

}  // namespace
}  // namespace transduce
