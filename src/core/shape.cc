#include "core/shape.h"

#include "core/error.h"

namespace transduce {

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

void Shape::push_back(int64_t d) {
  if (n_ == kMaxDims) fail("a tensor may have at most {} dimensions", kMaxDims);
  if (d < 0) fail("negative tensor dimension {}", d);
  d_[n_++] = d;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < n_; ++i) n *= d_[i];
  return n;
}

int64_t Shape::rows() const {
  int64_t n = 1;
  for (int i = 0; i + 1 < n_; ++i) n *= d_[i];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (n_ != o.n_) return false;
  for (int i = 0; i < n_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < n_; ++i) s += (i ? ", " : "") + std::to_string(d_[i]);
  return s + "]";
}

}  // namespace transduce
