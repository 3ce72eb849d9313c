// A model computing in int8 (Transformer::set_precision(INT8), inference only) against the same
// weights in fp32: the logits agree to within what 8-bit quantization of every product's inputs
// does, but are not fp32's own (int8 really ran); the fp32 weights are gone and cannot come back,
// and only what translation reads is kept; and such a model refuses to train.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/arena.h"
#include "core/error.h"
#include "model/transformer.h"
#include "support/random_model.h"

namespace transduce {
namespace {

ModelConfig config() {
  return testing::precision_test_config();
}

TEST(Int8Model, LogitsAgreeWithFp32WithinQuantizationError) {
  Transformer fp32(config()), int8(config());
  testing::init_untrained(fp32, 7);
  testing::init_untrained(int8, 7);
  int8.release_gradients();
  int8.set_precision(Precision::INT8);
  const Tensor want = testing::translation_logits(fp32), got = testing::translation_logits(int8);
  ASSERT_EQ(want.shape(), got.shape());
  double diff2 = 0, norm2 = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = static_cast<double>(got.f32()[i]) - want.f32()[i];
    diff2 += d * d;
    norm2 += static_cast<double>(want.f32()[i]) * want.f32()[i];
  }
  const double relative = std::sqrt(diff2 / norm2);
  // Each product's inputs are rounded to 1/254 of their row's range (uniform rounding error:
  // about 0.2% of a typical value each); through 2 + 2 layers of products, normalised by layer
  // norm at each step, that is about 1-2% of the logits (measured: 1.4%). A wrong weight or a
  // transposition would be about 100%. The biases, gains and shifts are init_untrained's, not
  // zeros and ones: int8 products that left out their bias measure 60%, layer norms that left
  // out their gain or shift about 50%.
  EXPECT_LT(relative, 0.04);
  EXPECT_GT(relative, 1e-4) << "the int8 model computes fp32's logits: int8 did not run";
}

TEST(Int8Model, KeepsOnlyWhatTranslationReads) {
  Transformer model(config());
  testing::init_untrained(model, 3);
  model.release_gradients();
  model.set_precision(Precision::INT8);
  int quantized = 0;
  for (const Param* p : model.parameters()) {
    EXPECT_FALSE(p->grad.defined()) << p->name;
    if (!p->gemm_weight) continue;
    ++quantized;
    EXPECT_FALSE(p->value.defined()) << p->name;
    EXPECT_TRUE(p->int8.packed) << p->name;
    // The embedding's lookups read its int8 rows; a linear layer's weights only the packed copy.
    EXPECT_EQ(p->int8.q.defined(), p == &model.embedding.weight) << p->name;
  }
  EXPECT_EQ(quantized, 1 + 2 * 4 + 2 * 8 + 2 * 2 + 2 * 2);  // embedding, attention, FFNs
  EXPECT_THROW(model.set_precision(Precision::FP32), Error);
  EXPECT_THROW(model.set_precision(Precision::BF16), Error);
}

// quantize_int8 (what `transduce quantize` saves) keeps every weight's integers and packs nothing;
// set_precision(INT8) afterwards packs them, and the model computes what one quantized at once
// does.
TEST(Int8Model, QuantizedWithoutPackingThenPackedComputesTheSame) {
  Transformer once(config()), twice(config());
  testing::init_untrained(once, 5);
  testing::init_untrained(twice, 5);
  twice.quantize_int8();
  for (const Param* p : twice.parameters()) {
    if (!p->gemm_weight) continue;
    EXPECT_TRUE(p->int8.q.defined()) << p->name;
    EXPECT_FALSE(p->int8.packed) << p->name;
    EXPECT_FALSE(p->value.defined()) << p->name;
  }
  twice.set_precision(Precision::INT8);
  once.set_precision(Precision::INT8);
  const Tensor a = testing::translation_logits(once), b = testing::translation_logits(twice);
  EXPECT_EQ(std::vector<float>(a.f32(), a.f32() + a.numel()),
            std::vector<float>(b.f32(), b.f32() + b.numel()));
}

TEST(Int8Model, RefusesToTrain) {
  Transformer model(config());
  testing::init_untrained(model, 3);
  model.set_precision(Precision::INT8);
  Batch batch{Tensor::zeros({2, 5}, DType::I32), Tensor::zeros({2, 5}, DType::I32),
              Tensor::zeros({2, 5}, DType::I32)};
  for (int64_t i = 0; i < 10; ++i)
    batch.src.i32()[i] = batch.tgt_in.i32()[i] = batch.tgt_out.i32()[i] = 5;
  Arena arena;
  Context ctx(arena, /*train=*/true);
  EXPECT_THROW(model.forward(ctx, batch), Error);
}

}  // namespace
}  // namespace transduce
