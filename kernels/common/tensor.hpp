// Tensor: an owning, 64-byte aligned FP32 buffer with a 4-D shape and a layout tag.
// 64 bytes is a cache line and an AVX-512 register, so aligned SIMD loads never split lines.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace convlab {

enum class Layout {
  nchw,  // PyTorch's default: batch, channels, rows, columns
  nc,    // a 2-D activation (after flatten / global pooling): batch, features
};
std::string_view to_string(Layout layout);

struct Shape {
  std::array<std::int64_t, 4> dims{1, 1, 1, 1};  // n, c, h, w (unused trailing dims are 1)
  std::int64_t n() const { return dims[0]; }
  std::int64_t c() const { return dims[1]; }
  std::int64_t h() const { return dims[2]; }
  std::int64_t w() const { return dims[3]; }
  std::int64_t elems() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
  std::int64_t item_elems() const { return dims[1] * dims[2] * dims[3]; }  // one batch item
  bool operator==(const Shape&) const = default;
};
Shape nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w);

namespace detail {
struct AlignedFree {
  void operator()(float* p) const noexcept;
};
}  // namespace detail

class Tensor {
 public:
  static constexpr std::size_t kAlignment = 64;

  Tensor() = default;
  // Allocates (zero-filled). Throws std::bad_alloc when the memory cannot be had, so that a
  // batch too large for the machine is reported as out of memory rather than crashing.
  explicit Tensor(Shape shape, Layout layout = Layout::nchw);

  const Shape& shape() const { return shape_; }
  Layout layout() const { return layout_; }
  std::int64_t elems() const { return shape_.elems(); }
  std::size_t bytes() const { return static_cast<std::size_t>(elems()) * sizeof(float); }

  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  std::span<float> span() { return {data(), static_cast<std::size_t>(elems())}; }
  std::span<const float> span() const { return {data(), static_cast<std::size_t>(elems())}; }

 private:
  Shape shape_{};
  Layout layout_ = Layout::nchw;
  std::unique_ptr<float[], detail::AlignedFree> data_;
};

// Aligned raw storage for kernel workspaces and packed weights.
std::unique_ptr<float[], detail::AlignedFree> aligned_floats(std::size_t count);

}  // namespace convlab
