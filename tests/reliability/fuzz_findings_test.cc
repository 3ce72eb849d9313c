// Every crash the fuzz targets (fuzz/, docs/reliability.md) found, fed to the same function as the
// exact input that crashed it: each must now be the reader's clear error. The minimised inputs are
// byte strings; the deeply nested ones are built, as they are 100 KB of brackets.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"
#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"
#include "parse/parse_settings.h"
#include "parse/tree.h"
#include "serve/api.h"
#include "support/error_of.h"
#include "support/toy_corpus.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace transduce {
namespace {

class FuzzFinding : public ::testing::Test {
 protected:
  FuzzFinding() : dir_("transduce_fuzz_finding") {}

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  testing::TempDir dir_;
};

using testing::error_of;

// An 8-byte little-endian header length and the header.
std::string safetensors_bytes(const std::string& header) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header;
}

// safetensors_fuzz: json::parse throws out_of_range (not parse_error) for a number too large for a
// double; it escaped load_safetensors.
TEST_F(FuzzFinding, SafetensorsHeaderWithANumberTooLargeForADouble) {
  const std::string crash("\x10\x00\x00\x00\x00\x00\x00\x00{\"\":41e308e\":]9\x0d", 24);
  const std::string path = write("overflow.safetensors", crash);
  const std::string message = error_of([&] { io::load_safetensors(path); });
  EXPECT_NE(message.find(path + ": the header is not valid JSON: number overflow parsing '41e308'"),
            std::string::npos)
      << message;
}

// Found with safetensors_fuzz: the message for a header that is not an object dumped the whole
// value, recursing once per level of nesting, and 100000 nested arrays overflowed the stack.
TEST_F(FuzzFinding, SafetensorsHeaderOfDeeplyNestedArrays) {
  const std::string path = write(
      "deep.safetensors", safetensors_bytes(std::string(100000, '[') + std::string(100000, ']')));
  EXPECT_EQ(error_of([&] { io::load_safetensors(path); }),
            path + ": the header should be a JSON object, not [[...]] (array)");
}

// Found with safetensors_fuzz: a field of the wrong type in the config metadata threw a
// nlohmann::json::type_error out of config_from_metadata, which latest_checkpoint() does not catch.
TEST_F(FuzzFinding, ConfigMetadataWithAFieldOfTheWrongType) {
  const std::string path =
      write("meta.safetensors",
            safetensors_bytes(R"({"__metadata__":{"config":"{\"dropout\":\"x\"}"}})"));
  const io::SafetensorsFile file = io::load_safetensors(path);
  const std::string message = error_of([&] { io::config_from_metadata(file, path); });
  EXPECT_NE(message.find(path + ": the config in the metadata has a field of the wrong type"),
            std::string::npos)
      << message;
}

// Found with model_config_fuzz: a float outside int's range converted to int (undefined
// behaviour), and a larger integer silently wrapped (5000000000 layers became 705032704).
TEST_F(FuzzFinding, ModelConfigWithIntegersOutOfRange) {
  write("config.json", R"({"layers": 1e30})");
  EXPECT_EQ(error_of([&] { io::read_model_config(dir_.path()); }),
            dir_.path() + "/config.json: config: layers must be an integer that fits in 32 bits, " +
                "got 1e+30");
  write("config.json", R"({"d_model": 5000000000})");
  EXPECT_EQ(error_of([&] { io::read_model_config(dir_.path()); }),
            dir_.path() + "/config.json: config: d_model must be an integer that fits in 32 " +
                "bits, got 5000000000");
  write("config.json", R"({"heads": 2.5})");
  EXPECT_NE(error_of([&] { io::read_model_config(dir_.path()); }).find("heads must be an integer"),
            std::string::npos);
  write("config.json", R"({"layers": 2.0, "heads": "x"})");
  EXPECT_EQ(error_of([&] { io::read_model_config(dir_.path()); }),
            dir_.path() + "/config.json: config: heads must be an integer, not a string");
  write("config.json", R"({"layers": 2.0})");  // an integral float is still an integer
  EXPECT_EQ(io::read_model_config(dir_.path()).layers, 2);
}

// Found with parse_settings_fuzz: the same conversion of a float outside int's range.
TEST_F(FuzzFinding, ParseSettingsWithABeamOutOfRange) {
  write("parse.json", R"({"task":"parse","decoding":{"beam": 1e30}})");
  EXPECT_EQ(error_of([&] { parse::read_parse_settings(dir_.path()); }),
            dir_.path() + "/parse.json: \"beam\" must be an integer that fits in 32 bits, got " +
                "1e+30");
}

// Seen while extending checkpoint_state_fuzz to the training options of state.json (which the
// target now runs): a float out of range converted to int (undefined behaviour), an integer out of
// range wrapped, and a string threw nlohmann's type_error out of update_from_json.
TEST_F(FuzzFinding, SavedTrainingOptionsOutOfRange) {
  TrainOptions o;
  auto update = [&](const char* text) { update_from_json(nlohmann::json::parse(text), o); };
  EXPECT_EQ(error_of([&] { update(R"({"accum": 1e30})"); }),
            "the saved training options: accum must be an integer within [-2147483648, "
            "2147483647], got 1e+30");
  EXPECT_EQ(error_of([&] { update(R"({"keep": 5000000000})"); }),
            "the saved training options: keep must be an integer within [-2147483648, "
            "2147483647], got 5000000000");
  EXPECT_EQ(error_of([&] { update(R"({"seed": -1})"); }),
            "the saved training options: seed must be an integer within [0, "
            "18446744073709551615], got -1");
  EXPECT_EQ(error_of([&] { update(R"({"lr_scale": "x"})"); }),
            "the saved training options: lr_scale must be a number, not string");
  EXPECT_EQ(error_of([&] { update("5"); }),
            "the saved training options should be a JSON object, not number");
  update(R"({"accum": 4.0, "batch_tokens": 9007199254740993, "lr_scale": 2})");
  EXPECT_EQ(o.accum, 4);
  EXPECT_EQ(o.batch_tokens, 9007199254740993);  // exact: not through a double
  EXPECT_EQ(o.lr_scale, 2.0f);
}

// vocab_fuzz: SentencePiece threw darts_clone's exception (not a status) for a model with an
// empty piece; it escaped the Tokenizer's constructor.
TEST_F(FuzzFinding, VocabularyWithAnEmptyPiece) {
  const std::string crash(
      "\x0a\x0e\x0a\x05\xff\xff\xff\xff\x00\x18\x02\x15\x00\x00\x00\x80\x0a\x09\x0a\x02\x00\x1f"
      "\x80\xbf\xc0ty",
      27);
  const std::string path = write("spm.model", crash);
  const std::string message = error_of([&] { Tokenizer{path}; });
  EXPECT_NE(message.find(path + ": not a SentencePiece model (corrupt or wrong file): "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("zero-length key"), std::string::npos) << message;
}

// api_request_fuzz: the same out_of_range escaped parse_translate_request instead of a 400.
TEST_F(FuzzFinding, RequestBodyWithANumberTooLargeForADouble) {
  testing::write_toy_corpus(dir_.path());
  Tokenizer::train({dir_.path() + "/train.src", dir_.path() + "/train.tgt"}, 60, "bpe",
                   dir_.path() + "/spm", 1);
  const Tokenizer tokenizer(dir_.path() + "/spm.model");
  try {
    parse_translate_request("1e999", tokenizer, ServiceLimits{}, TranslateOptions{});
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(), "malformed JSON: number overflow parsing '1e999'");
  }
}

// Found with trees_fuzz: reading (and then printing, normalising, destroying) a tree recursed once
// per bracket, and 100000 nested brackets overflowed the stack.
TEST_F(FuzzFinding, TreeOfDeeplyNestedBrackets) {
  const std::string deep = std::string(100000, '(') + "(A b)" + std::string(100000, ')') + "\n";
  EXPECT_EQ(error_of([&] { parse::read_trees(deep, "t.mrg"); }),
            "t.mrg:1: brackets nested more than 1000 deep");
  // As deep as allowed still reads.
  const std::string limit = std::string(999, '(') + "(A b)" + std::string(999, ')');
  EXPECT_EQ(parse::to_string(parse::read_trees(limit, "t.mrg").at(0)).size(), limit.size() + 999);
}

}  // namespace
}  // namespace transduce
