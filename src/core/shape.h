// A tensor shape of at most kMaxDims dimensions, stored inline so making one never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace transduce {

class Shape {
 public:
  static constexpr int kMaxDims = 5;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  template <typename It>
  Shape(It begin, It end) {
    for (It it = begin; it != end; ++it) push_back(static_cast<int64_t>(*it));
  }

  int ndim() const { return n_; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  int64_t numel() const;
  void push_back(int64_t d);
  // Product of all dimensions but the last: a tensor seen as a [rows, cols] matrix.
  int64_t rows() const;
  int64_t cols() const { return n_ == 0 ? 1 : d_[n_ - 1]; }

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;
  const int64_t* begin() const { return d_.data(); }
  const int64_t* end() const { return d_.data() + n_; }

 private:
  std::array<int64_t, kMaxDims> d_{};
  int n_ = 0;
};

}  // namespace transduce
