// The whole model against an independent PyTorch implementation of the same weights
// (tests/fixtures/make_golden.py wrote the fixtures; float64 reference, our float32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/model_weights.h"

namespace transduce {
namespace {

struct Comparison {
  double max_abs_error = 0;
  double max_ref = 0;
};

Comparison compare(const Tensor& got, const Tensor& want) {
  Comparison c;
  EXPECT_EQ(got.numel(), want.numel());
  for (int64_t i = 0; i < std::min(got.numel(), want.numel()); ++i) {
    c.max_abs_error = std::max(c.max_abs_error, std::abs(double{got.f32()[i]} - want.f32()[i]));
    c.max_ref = std::max(c.max_ref, std::abs(double{want.f32()[i]}));
  }
  return c;
}

// Errors relative to the tensor's largest entry must stay under 1e-5. A tensor that is zero in
// exact arithmetic (the k_proj biases: softmax ignores a shift shared by every score) is
// compared with `zero_floor` instead: float32 round-off on the scale of the other gradients.
void expect_close(const Tensor& got, const Tensor& want, const std::string& what,
                  double zero_floor = 0) {
  Comparison c = compare(got, want);
  const double allowed = c.max_ref > 1e-12 ? 1e-5 * c.max_ref : zero_floor;
  EXPECT_LE(c.max_abs_error, allowed)
      << what << ": largest error " << c.max_abs_error << " against largest value " << c.max_ref;
}

class Golden : public ::testing::TestWithParam<const char*> {};

TEST_P(Golden, LossLogitsEncoderAndEveryGradientMatchPyTorch) {
  const std::string path = std::string(TRANSDUCE_FIXTURES_DIR) + "/" + GetParam();
  io::SafetensorsFile file = io::load_safetensors(path);
  ModelConfig config = io::config_from_metadata(file, path);
  Transformer model(config);
  io::load_weights(model, file, path, /*strict=*/false);

  Batch batch{file.tensors.at("batch.src"), file.tensors.at("batch.tgt_in"),
              file.tensors.at("batch.tgt_out")};
  Arena arena;
  Context ctx(arena, /*train=*/false);
  model.zero_grad();
  ops::CrossEntropySums sums = model.forward(ctx, batch);
  ASSERT_EQ(sums.tokens, file.tensors.at("expect.tokens").i32()[0]);
  const double loss = sums.loss / sums.tokens;
  const double want = file.tensors.at("expect.loss").f32()[0];
  EXPECT_NEAR(loss, want, 1e-5 * std::abs(want)) << "mean label-smoothed loss";
  expect_close(model.logits(), file.tensors.at("expect.logits"), "logits");

  Context enc_ctx(arena);
  Tensor memory = model.encode(enc_ctx, batch.src, model.padding_mask(enc_ctx, batch.src));
  expect_close(memory, file.tensors.at("expect.encoder_out"), "encoder output");

  model.backward(ctx, 1.0f / static_cast<float>(sums.tokens));
  double largest_gradient = 0;
  for (Param* p : model.parameters())
    largest_gradient = std::max(largest_gradient, compare(p->grad, p->grad).max_ref);
  int checked = 0;
  for (Param* p : model.parameters()) {
    auto it = file.tensors.find("grad." + p->name);
    ASSERT_NE(it, file.tensors.end()) << "no reference gradient for " << p->name;
    expect_close(p->grad, it->second, "gradient of " + p->name, 1e-7 * largest_gradient);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(model.parameters().size()));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden,
                         ::testing::Values("golden_post_ln.safetensors",
                                           "golden_dk_variant.safetensors",
                                           "golden_pre_ln_learned.safetensors"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n = n.substr(7, n.find('.') - 7);
                           return n;
                         });

}  // namespace
}  // namespace transduce
