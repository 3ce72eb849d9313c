#include "support/exact_product.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/bf16_tensor.h"

namespace transduce::testing {

namespace {
constexpr double kU32 = 1.0 / (1 << 24);  // fp32's unit roundoff
constexpr double kU16 = 1.0 / (1 << 8);   // bf16's
}  // namespace

ExactProduct exact_product(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  ExactProduct e{std::vector<double>(static_cast<size_t>(m * n)),
                 std::vector<double>(static_cast<size_t>(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.defined() ? bias.f32()[j] : 0.0, a = std::fabs(s);
      for (int64_t p = 0; p < k; ++p) {
        const double t = value_at(x, i * k + p) * value_at(w, j * k + p);
        s += t;
        a += std::fabs(t);
      }
      e.y[static_cast<size_t>(i * n + j)] = s;
      e.magnitude[static_cast<size_t>(i * n + j)] = a;
    }
  return e;
}

void expect_close_to_exact(const Tensor& got, const ExactProduct& want, int64_t k, bool relu,
                           const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.y.size()) << what;
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double exact_y = relu ? std::max(want.y[i], 0.0) : want.y[i];
    const double sums = (k + 3) * kU32 * want.magnitude[i];
    const double bound =
        sums + (got.dtype() == DType::BF16 ? kU16 * (std::fabs(exact_y) + sums) : 0.0) + 1e-30;
    const double g = value_at(got, i);
    bool ok = std::fabs(g - exact_y) <= bound;
    if (relu) ok = ok && g >= 0 && (want.y[i] >= -sums || g == 0);
    if (!ok) {
      ADD_FAILURE() << what << " element " << i << ": " << g << " vs " << exact_y << " (bound "
                    << bound << ")";
      ++bad;
    }
  }
}

}  // namespace transduce::testing
