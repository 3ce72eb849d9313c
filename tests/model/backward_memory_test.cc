// Backward gives each layer's temporaries back when the layer is done, so what backward adds to
// the arena's peak does not grow with the number of layers (forward's saved activations do).
#include <gtest/gtest.h>

#include "core/rng.h"
#include "model/transformer.h"

namespace transduce {
namespace {

struct Growth {
  size_t forward = 0;   // arena in use after forward: the saved activations
  size_t backward = 0;  // what backward added to the peak beyond that
};

Growth measure(int layers, Precision precision) {
  ModelConfig c;
  c.layers = layers;
  c.d_model = 64;
  c.d_ff = 256;
  c.heads = 4;
  c.d_k = c.d_v = 16;
  c.vocab_size = 300;
  c.max_positions = 64;
  Transformer model(c);
  model.init_parameters(1);
  model.set_precision(precision);
  const int64_t b = 8, len = 20;
  Batch batch{Tensor::empty({b, len}, DType::I32), Tensor::empty({b, len}, DType::I32),
              Tensor::empty({b, len}, DType::I32)};
  SplitMix64 rng(2);
  for (int64_t i = 0; i < b * len; ++i) {
    batch.src.i32()[i] = static_cast<int32_t>(rng.randint(4, 299));
    batch.tgt_in.i32()[i] = static_cast<int32_t>(rng.randint(4, 299));
    batch.tgt_out.i32()[i] = static_cast<int32_t>(rng.randint(4, 299));
  }
  Arena arena;
  Context ctx(arena, /*train=*/true, 1);
  model.zero_grad();
  model.forward(ctx, batch);
  const size_t after_forward = arena.used();
  model.backward(ctx, 1.0f / static_cast<float>(b * len));
  return {after_forward, arena.peak() - after_forward};
}

TEST(BackwardMemory, DoesNotGrowWithTheNumberOfLayers) {
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    const Growth two = measure(2, p), six = measure(6, p);
    SCOPED_TRACE(std::string(precision_name(p)));
    // Forward keeps every layer's activations: about three times as much for three times the
    // layers (the embeddings and the output projection are shared).
    EXPECT_GT(six.forward, 2 * two.forward);
    // Backward's temporaries live one layer at a time: the same peak either way, up to the
    // gradients that flow between layers. Kept for the whole pass, they would grow like forward.
    EXPECT_LT(six.backward, two.backward + two.backward / 4)
        << "backward added " << six.backward << " bytes with 6 layers, " << two.backward
        << " with 2";
  }
}

}  // namespace
}  // namespace transduce
