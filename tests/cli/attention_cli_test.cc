// Attention export: `transduce translate --attention FILE.json` and `transduce attention`. The
// weights in the files are the model's (they equal a training-path forward pass over the same
// tokens), rows sum to 1, the decoder never looks ahead, and the HTML page needs no network.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "decode/loaded_model.h"
#include "support/file_text.h"
#include "support/random_model.h"
#include "support/run_command.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

using nlohmann::json;
using testing::run_transduce;

class AttentionExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new testing::RandomModelDir("transduce_attention_cli"); }
  static void TearDownTestSuite() { delete dir_; }
  static std::string path(const std::string& name) { return dir_->path() + "/" + name; }

  static testing::RandomModelDir* dir_;
};

testing::RandomModelDir* AttentionExport::dir_ = nullptr;

// Checks one sentence's attention object against a forward pass of the training code over the
// same tokens (BLAS scores and masked_softmax, not the inference kernels that exported it).
void expect_the_models_weights(const json& a, LoadedModel& m) {
  const auto source = a["source_ids"].get<std::vector<int32_t>>();
  const auto target = a["target_ids"].get<std::vector<int32_t>>();
  ASSERT_FALSE(target.empty());
  EXPECT_EQ(source.back(), kEosId);
  EXPECT_EQ(target.back(), kEosId);
  for (size_t i = 0; i < source.size(); ++i)
    EXPECT_EQ(a["source_tokens"][i], m.tokenizer().piece(source[i]));
  for (size_t i = 0; i < target.size(); ++i) {
    EXPECT_EQ(a["target_tokens"][i], m.tokenizer().piece(target[i]));
    EXPECT_EQ(a["target_input_tokens"][i], m.tokenizer().piece(i ? target[i - 1] : kBosId));
  }
  const int64_t ls = static_cast<int64_t>(source.size()), lt = static_cast<int64_t>(target.size());
  Tensor src = Tensor::zeros({1, ls}, DType::I32), tgt_in = Tensor::zeros({1, lt}, DType::I32),
         tgt_out = Tensor::zeros({1, lt}, DType::I32);
  std::copy(source.begin(), source.end(), src.i32());
  std::copy(target.begin(), target.end(), tgt_out.i32());
  tgt_in.i32()[0] = kBosId;
  std::copy(target.begin(), target.end() - 1, tgt_in.i32() + 1);
  Arena arena;
  Context ctx(arena);
  m.model().forward(ctx, Batch{src, tgt_in, tgt_out});

  for (int l = 0; l < m.config().layers; ++l) {
    const struct {
      const char* kind;
      const MultiHeadAttention& module;
    } modules[] = {{"encoder_self", m.model().encoder.layers[l]->self_attn},
                   {"decoder_self", m.model().decoder.layers[l]->self_attn},
                   {"cross", m.model().decoder.layers[l]->cross_attn}};
    for (const auto& [kind, module] : modules) {
      const Tensor& p = module.probabilities();  // [1, H, Lq, Lk]
      const json& w = a[kind][l];
      ASSERT_EQ(static_cast<int64_t>(w.size()), p.dim(1)) << kind;
      for (int64_t h = 0; h < p.dim(1); ++h) {
        ASSERT_EQ(static_cast<int64_t>(w[h].size()), p.dim(2)) << kind;
        for (int64_t i = 0; i < p.dim(2); ++i) {
          ASSERT_EQ(static_cast<int64_t>(w[h][i].size()), p.dim(3)) << kind;
          double sum = 0;
          for (int64_t j = 0; j < p.dim(3); ++j) {
            const double x = w[h][i][j];
            sum += x;
            EXPECT_NEAR(x, p.f32()[((h * p.dim(2)) + i) * p.dim(3) + j], 2e-6)
                << kind << " layer " << l << " head " << h << " query " << i << " key " << j;
            if (std::string(kind) == "decoder_self" && j > i) {
              EXPECT_EQ(x, 0.0) << "query " << i << " sees key " << j;
            }
          }
          EXPECT_NEAR(sum, 1.0, 1e-5) << kind << " layer " << l << " head " << h;
        }
      }
    }
  }
}

TEST_F(AttentionExport, TranslateWritesTheAttentionOfEachBestTranslation) {
  std::ofstream(path("in.txt")) << "red dog runs\n\na cat over the street\n";
  const testing::CommandResult r =
      run_transduce("translate -m " + path("model") + " --beam 3 --input " + path("in.txt") +
                        " --attention " + path("att.json"),
                    /*merge_stderr=*/false);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) out.push_back(l);
  ASSERT_EQ(out.size(), 3u);

  const json file = json::parse(testing::read_file(path("att.json")));
  EXPECT_EQ(file["model"], "model");
  ASSERT_EQ(file["sentences"].size(), 3u);
  LoadedModel m(path("model"));
  for (size_t i = 0; i < 3; ++i) {
    const json& s = file["sentences"][i];
    EXPECT_EQ(s["line"], i + 1);
    EXPECT_EQ(s["translation"], out[i]);
    if (i == 1) {
      EXPECT_EQ(s["source"], "");
      EXPECT_TRUE(s["attention"].is_null());
      continue;
    }
    SCOPED_TRACE("line " + std::to_string(i + 1));
    std::vector<int32_t> pieces = m.tokenizer().encode(s["source"].get<std::string>());
    pieces.push_back(kEosId);
    EXPECT_EQ(s["attention"]["source_ids"].get<std::vector<int32_t>>(), pieces);
    expect_the_models_weights(s["attention"], m);
  }

  // A run that fails part-way leaves the previous file as it was.
  std::ofstream(path("bad.txt")) << "red dog\n\xff\n";
  const testing::CommandResult bad =
      run_transduce("translate -m " + path("model") + " --input " + path("bad.txt") +
                    " --attention " + path("att.json"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find(":2: invalid UTF-8"), std::string::npos) << bad.out;
  EXPECT_EQ(json::parse(testing::read_file(path("att.json"))), file);
}

TEST_F(AttentionExport, TheAttentionCommandWritesASelfContainedPage) {
  const testing::CommandResult r =
      run_transduce("attention -m " + path("model") +
                    " --sentence 'red dog' --sentence 'the cat runs' --output " +
                    path("view.html") + " --attention " + path("view.json"));
  ASSERT_EQ(r.status, 0) << r.out;
  const json data = json::parse(testing::read_file(path("view.json")));
  ASSERT_EQ(data["sentences"].size(), 2u);
  EXPECT_EQ(data["sentences"][1]["source"], "the cat runs");
  LoadedModel m(path("model"));
  expect_the_models_weights(data["sentences"][0]["attention"], m);

  const std::string html = testing::read_file(path("view.html"));
  // Everything inline: no fetched script, style sheet, font or image. (The SVG namespace is a
  // name, not an address anything is fetched from.)
  std::string addresses = html;
  for (size_t at; (at = addresses.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    addresses.erase(at, 26);
  for (const char* outside :
       {"http://", "https://", "<link rel=\"stylesheet\"", " src=\"", "@import"})
    EXPECT_EQ(addresses.find(outside), std::string::npos) << outside;
  EXPECT_NE(html.find("TransduceAttention"), std::string::npos);
  // The data sits in the page as JSON ('<' written as \u003c so "</s>" cannot end the script).
  const std::string start = "const DATA = [", end = "][0]";
  const size_t a = html.find(start);
  ASSERT_NE(a, std::string::npos);
  const size_t b = html.find(end, a);
  ASSERT_NE(b, std::string::npos);
  const std::string embedded = html.substr(a + start.size(), b - a - start.size());
  EXPECT_EQ(embedded.find("</"), std::string::npos);
  EXPECT_EQ(json::parse(embedded), data);

  // The same page from the JSON file.
  ASSERT_EQ(
      run_transduce("attention --from " + path("view.json") + " --output " + path("again.html"))
          .status,
      0);
  EXPECT_EQ(testing::read_file(path("again.html")), html);
}

TEST_F(AttentionExport, BadUseIsOneClearLine) {
  testing::CommandResult r = run_transduce("attention --output " + path("x.html"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("give either -m MODEL_DIR with --sentence TEXT, or --from FILE.json"),
            std::string::npos)
      << r.out;
  r = run_transduce("attention -m " + path("model") + " --output " + path("x.html"));
  EXPECT_NE(r.out.find("-m needs at least one --sentence TEXT"), std::string::npos) << r.out;
  r = run_transduce("attention --from " + path("nowhere.json") + " --output " + path("x.html"));
  EXPECT_NE(r.out.find("nowhere.json: cannot open"), std::string::npos) << r.out;
  std::ofstream(path("other.json")) << R"({"translations": []})";
  r = run_transduce("attention --from " + path("other.json") + " --output " + path("x.html"));
  EXPECT_NE(r.out.find("other.json: not an attention file"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("x.html")));
}

}  // namespace
}  // namespace transduce
