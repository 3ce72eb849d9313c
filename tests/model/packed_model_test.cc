// A translating model with packed weights (Transformer::pack_for_inference) against the same
// model without: the logits agree to fp32's rounding in fp32, and to bf16's rounding of the
// activations in bf16; every GEMM weight is packed (bf16 ones where oneDNN multiplies bf16), and
// a change of precision or quantizing drops the copies.
#include <gtest/gtest.h>

#include <cmath>

#include "model/transformer.h"
#include "ops/ops.h"
#include "support/random_model.h"

namespace transduce {
namespace {

// ||got - want|| / ||want||, and the largest |got - want|.
struct Difference {
  double relative = 0, largest = 0;
};
Difference difference(const Tensor& got, const Tensor& want) {
  double diff2 = 0, norm2 = 0, largest = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = static_cast<double>(got.f32()[i]) - want.f32()[i];
    diff2 += d * d;
    norm2 += static_cast<double>(want.f32()[i]) * want.f32()[i];
    largest = std::max(largest, std::fabs(d));
  }
  return {std::sqrt(diff2 / norm2), largest};
}

int packed_weights(const Transformer& model) {
  int packed = 0;
  for (const Param* p : model.parameters()) {
    EXPECT_TRUE(p->gemm_weight || !p->packed.defined()) << p->name;
    packed += p->packed.defined();
  }
  return packed;
}

constexpr int kGemmWeights = 1 + 2 * 4 + 2 * 8 + 2 * 2 + 2 * 2;  // embedding, attention, FFNs

TEST(PackedModel, LogitsAgreeWithUnpackedInFp32AndBf16) {
  for (Precision precision : {Precision::FP32, Precision::BF16}) {
    Transformer plain(testing::precision_test_config()), packed(testing::precision_test_config());
    testing::init_untrained(plain, 7);
    testing::init_untrained(packed, 7);
    plain.set_precision(precision);
    packed.set_precision(precision);
    packed.pack_for_inference();
    const bool packs = precision == Precision::FP32 || ops::bf16_support().available;
    EXPECT_EQ(packed_weights(packed), packs ? kGemmWeights : 0) << precision_name(precision);
    const Difference d =
        difference(testing::translation_logits(packed), testing::translation_logits(plain));
    // fp32: the same products summed in another order (OpenBLAS's against oneDNN's), about k u
    // relative each, through 2 + 2 layers (measured: at most 2.6e-6 absolute). bf16: both round
    // every product's input to bf16, and a sum that differs in its last fp32 bit can round the
    // other way (2^-8 relative) in a few of them (measured: identical, oneDNN's one kernel
    // summing in the same order). A wrong weight, a missing bias or ReLU would be order 1.
    const double bound = precision == Precision::FP32 ? 1e-5 : 2e-3;
    EXPECT_LT(d.relative, bound) << precision_name(precision) << ", largest " << d.largest;
  }
}

TEST(PackedModel, AChangeOfPrecisionOrQuantizingDropsThePackedCopies) {
  Transformer model(testing::precision_test_config());
  testing::init_untrained(model, 3);
  model.pack_for_inference();
  EXPECT_EQ(packed_weights(model), kGemmWeights);
  model.set_precision(Precision::FP32);
  EXPECT_EQ(packed_weights(model), 0);
  // Quantizing (transduce quantize, from a model loaded to translate) drops them with the fp32
  // weights they copy, and packing again leaves an int8 model's weights to int8.
  model.pack_for_inference();
  model.quantize_int8();
  EXPECT_EQ(packed_weights(model), 0);
  model.pack_for_inference();
  EXPECT_EQ(packed_weights(model), 0);
}

}  // namespace
}  // namespace transduce
