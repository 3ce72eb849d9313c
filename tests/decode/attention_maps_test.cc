// The attention weights translation exports are the ones the model computes: recorded from the
// inference kernels, they equal PyTorch's (tests/fixtures/make_golden.py) and those of the
// training-path forward pass (BLAS scores and masked_softmax), for every layer and head.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "decode/attention_maps.h"
#include "io/model_weights.h"
#include "support/random_model.h"
#include "text/special_ids.h"

namespace transduce {
namespace {

// w[h, i, j] of a [H, Lq, Lk] tensor, or of sentence b of a [B, H, Lq, Lk] one.
float at(const Tensor& t, int64_t h, int64_t i, int64_t j) {
  return t.f32()[(h * t.dim(1) + i) * t.dim(2) + j];
}
float at(const Tensor& t, int64_t b, int64_t h, int64_t i, int64_t j) {
  return t.f32()[((b * t.dim(1) + h) * t.dim(2) + i) * t.dim(3) + j];
}

int64_t real_tokens(const Tensor& ids, int64_t b) {
  int64_t n = 0;
  for (int64_t j = 0; j < ids.dim(1); ++j) n += ids.i32()[b * ids.dim(1) + j] != kPadId;
  return n;
}

// Every weight of `got` ([H, lq, lk]) against sentence b of `want` ([B, H, >= lq, >= lk]).
void expect_weights(const Tensor& got, const Tensor& want, int64_t b, int64_t lq, int64_t lk,
                    const std::string& what) {
  ASSERT_EQ(got.dim(0), want.dim(1)) << what;
  ASSERT_EQ(got.dim(1), lq) << what;
  ASSERT_EQ(got.dim(2), lk) << what;
  double worst = 0;
  for (int64_t h = 0; h < got.dim(0); ++h)
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j)
        worst = std::max(worst, std::abs(double{at(got, h, i, j)} - at(want, b, h, i, j)));
  EXPECT_LE(worst, 1e-5) << what << ", sentence " << b;
}

class AttentionGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(AttentionGolden, EveryLayerAndHeadMatchesPyTorchAndTheTrainingForwardPass) {
  const std::string path = std::string(TRANSDUCE_FIXTURES_DIR) + "/" + GetParam();
  io::SafetensorsFile file = io::load_safetensors(path);
  const ModelConfig config = io::config_from_metadata(file, path);
  Transformer model(config);
  io::load_weights(model, file, path, /*strict=*/false);
  const Tensor& src = file.tensors.at("batch.src");
  const Tensor& tgt_in = file.tensors.at("batch.tgt_in");

  // The training path keeps each module's weights ([B, H, Lq, Lk]) for backward.
  Arena arena;
  Context ctx(arena, /*train=*/false);
  model.forward(ctx, Batch{src, tgt_in, file.tensors.at("batch.tgt_out")});
  std::map<std::string, Tensor> forward;
  for (int l = 0; l < config.layers; ++l) {
    const std::string e = "encoder.layers." + std::to_string(l) + ".";
    const std::string d = "decoder.layers." + std::to_string(l) + ".";
    forward[e + "self_attn"] = model.encoder.layers[l]->self_attn.probabilities().clone();
    forward[d + "self_attn"] = model.decoder.layers[l]->self_attn.probabilities().clone();
    forward[d + "cross_attn"] = model.decoder.layers[l]->cross_attn.probabilities().clone();
  }

  for (int64_t b = 0; b < src.dim(0); ++b) {
    const int64_t ls = real_tokens(src, b), lt = real_tokens(tgt_in, b);
    const std::vector<int32_t> source(src.i32() + b * src.dim(1), src.i32() + b * src.dim(1) + ls);
    // Fed BOS then `output`: exactly the sentence's decoder input.
    const std::vector<int32_t> output(tgt_in.i32() + b * tgt_in.dim(1) + 1,
                                      tgt_in.i32() + b * tgt_in.dim(1) + lt);
    const AttentionMaps maps = attention_maps(model, source, output);
    ASSERT_EQ(maps.target_input(), std::vector<int32_t>(tgt_in.i32() + b * tgt_in.dim(1),
                                                        tgt_in.i32() + b * tgt_in.dim(1) + lt));
    ASSERT_EQ(static_cast<int>(maps.encoder_self.size()), config.layers);
    for (int l = 0; l < config.layers; ++l) {
      const std::string e = "encoder.layers." + std::to_string(l) + ".self_attn";
      const std::string d = "decoder.layers." + std::to_string(l) + ".";
      for (const char* source_of_truth : {"pytorch", "forward"}) {
        auto want = [&](const std::string& name) -> const Tensor& {
          return std::string(source_of_truth) == "pytorch"
                     ? file.tensors.at("expect.attention." + name)
                     : forward.at(name);
        };
        const std::string why = std::string(source_of_truth) + " ";
        expect_weights(maps.encoder_self[l], want(e), b, ls, ls, why + e);
        expect_weights(maps.decoder_self[l], want(d + "self_attn"), b, lt, lt,
                       why + d + "self_attn");
        expect_weights(maps.cross[l], want(d + "cross_attn"), b, lt, ls, why + d + "cross_attn");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AttentionGolden,
                         ::testing::Values("golden_post_ln.safetensors",
                                           "golden_dk_variant.safetensors",
                                           "golden_pre_ln_learned.safetensors"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(7, n.find('.') - 7);
                         });

TEST(AttentionMaps, RowsSumToOneAndNoPositionSeesTheFuture) {
  const ModelConfig c = testing::small_random_config(40);
  Transformer model(c);
  model.init_parameters(11);
  const std::vector<int32_t> source{5, 9, 17, 4, 30, kEosId};
  const std::vector<int32_t> output{7, 7, 21, 39};
  const AttentionMaps maps = attention_maps(model, source, output);
  EXPECT_EQ(maps.target, (std::vector<int32_t>{7, 7, 21, 39, kEosId}));
  EXPECT_EQ(maps.target_input(), (std::vector<int32_t>{kBosId, 7, 7, 21, 39}));
  for (int l = 0; l < c.layers; ++l) {
    for (const Tensor* t : {&maps.encoder_self[l], &maps.decoder_self[l], &maps.cross[l]}) {
      ASSERT_EQ(t->dim(0), c.heads);
      for (int64_t h = 0; h < t->dim(0); ++h)
        for (int64_t i = 0; i < t->dim(1); ++i) {
          double sum = 0;
          for (int64_t j = 0; j < t->dim(2); ++j) {
            const float w = at(*t, h, i, j);
            EXPECT_GE(w, 0.0f);
            sum += w;
            if (t == &maps.decoder_self[l] && j > i) {
              EXPECT_EQ(w, 0.0f) << "query " << i;
            }
          }
          EXPECT_NEAR(sum, 1.0, 1e-5) << "layer " << l << " head " << h << " query " << i;
        }
    }
    EXPECT_EQ(maps.encoder_self[l].dim(1), 6);
    EXPECT_EQ(maps.decoder_self[l].dim(1), 5);
    EXPECT_EQ(maps.cross[l].dim(2), 6);
  }
  EXPECT_THROW(attention_maps(model, {}, output), Error);
}

}  // namespace
}  // namespace transduce
