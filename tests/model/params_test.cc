// Parameter counts: the built model against an analytic formula, and Table 3's column.
#include <gtest/gtest.h>

#include <cmath>

#include "model/transformer.h"

namespace transduce {
namespace {

// Written out here, independently of ModelConfig::parameter_count():
//   embedding V*d (shared: source, target, output projection; no output bias)
//   attention: Q, K (d -> h*d_k), V (d -> h*d_v), O (h*d_v -> d), each with a bias
//   FFN: d -> d_ff -> d with biases; layer norm: gain + bias (2d)
//   encoder layer: attention + FFN + 2 norms; decoder layer: 2 attentions + FFN + 3 norms
int64_t analytic_count(int64_t V, int64_t N, int64_t d, int64_t ff, int64_t h, int64_t dk,
                       int64_t dv) {
  const int64_t attention = 2 * (d * h * dk + h * dk) + (d * h * dv + h * dv) + (h * dv * d + d);
  const int64_t ffn = (d * ff + ff) + (ff * d + d);
  return V * d + N * (attention + ffn + 2 * 2 * d) + N * (2 * attention + ffn + 3 * 2 * d);
}

int64_t built_count(const ModelConfig& c) {
  Transformer model(c);
  int64_t n = 0;
  for (const Param* p : model.parameters()) n += p->value.numel();
  return n;
}

TEST(ParameterCount, BuiltModelEqualsTheFormula) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 1000;
  EXPECT_EQ(built_count(c), analytic_count(1000, 3, 256, 1024, 4, 64, 64));
  EXPECT_EQ(c.parameter_count(), built_count(c));

  c.heads = 3;
  c.d_k = 7;
  c.d_v = 11;
  EXPECT_EQ(built_count(c), analytic_count(1000, 3, 256, 1024, 3, 7, 11));
  EXPECT_EQ(c.parameter_count(), built_count(c));
}

TEST(ParameterCount, OptionsAddTheirTensors) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 500;
  const int64_t plain = analytic_count(500, 3, 256, 1024, 4, 64, 64);
  c.positions = Positions::Learned;
  c.max_positions = 100;
  EXPECT_EQ(built_count(c), plain + 2 * 100 * 256);  // one table per stack
  EXPECT_EQ(c.parameter_count(), built_count(c));
  c.positions = Positions::Sinusoidal;
  c.norm = NormPlacement::Pre;
  EXPECT_EQ(built_count(c), plain + 2 * 2 * 256);  // final norms of encoder and decoder
  EXPECT_EQ(c.parameter_count(), built_count(c));
}

struct Row {
  const char* name;
  int N, d, ff, h, dk, dv;
  double paper_millions;     // Table 3's column
  double analytic_millions;  // with biases and layer norms at V = 37000
};

void PrintTo(const Row& r, std::ostream* os) {
  *os << r.name;
}

class Table3 : public ::testing::TestWithParam<Row> {};

TEST_P(Table3, WithinSevenPercentOfThePaper) {
  const Row& r = GetParam();
  ModelConfig c;
  c.vocab_size = 37000;
  c.layers = r.N;
  c.d_model = r.d;
  c.d_ff = r.ff;
  c.heads = r.h;
  c.d_k = r.dk;
  c.d_v = r.dv;
  const int64_t n = c.parameter_count();
  EXPECT_EQ(n, analytic_count(37000, r.N, r.d, r.ff, r.h, r.dk, r.dv));
  EXPECT_NEAR(n / 1e6, r.analytic_millions, 0.05);
  EXPECT_LE(std::abs(n / 1e6 - r.paper_millions) / r.paper_millions, 0.07)
      << r.name << ": " << n << " against the paper's " << r.paper_millions << "M";
}

INSTANTIATE_TEST_SUITE_P(Rows, Table3,
                         ::testing::Values(Row{"base", 6, 512, 2048, 8, 64, 64, 65, 63.1},
                                           Row{"big", 6, 1024, 4096, 16, 64, 64, 213, 214.2},
                                           Row{"B_dk16", 6, 512, 2048, 8, 16, 64, 58, 56.0},
                                           Row{"B_dk32", 6, 512, 2048, 8, 32, 64, 60, 58.4},
                                           Row{"C_N2", 2, 512, 2048, 8, 64, 64, 36, 33.7},
                                           Row{"C_N4", 4, 512, 2048, 8, 64, 64, 50, 48.4},
                                           Row{"C_N8", 8, 512, 2048, 8, 64, 64, 80, 77.8},
                                           Row{"C_d256", 6, 256, 2048, 8, 32, 32, 28, 26.8},
                                           Row{"C_d1024", 6, 1024, 2048, 8, 128, 128, 168, 163.9},
                                           Row{"C_ff1024", 6, 512, 1024, 8, 64, 64, 53, 50.5},
                                           Row{"C_ff4096", 6, 512, 4096, 8, 64, 64, 90, 88.3}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace transduce
