#include "kernels/common/tensor.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace convlab {

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::nchw: return "NCHW";
    case Layout::nc: return "NC";
  }
  return "?";
}

Shape nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) { return Shape{{n, c, h, w}}; }

void detail::AlignedFree::operator()(float* p) const noexcept { std::free(p); }

std::unique_ptr<float[], detail::AlignedFree> aligned_floats(std::size_t count) {
  if (count == 0) count = 1;  // a valid, distinct pointer even for empty buffers
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(float) - Tensor::kAlignment)
    throw std::bad_alloc();
  // aligned_alloc needs the size rounded up to a multiple of the alignment.
  const std::size_t bytes = (count * sizeof(float) + Tensor::kAlignment - 1) / Tensor::kAlignment * Tensor::kAlignment;
  void* p = std::aligned_alloc(Tensor::kAlignment, bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);  // touch every page now, so the first timed run does not fault them in
  return std::unique_ptr<float[], detail::AlignedFree>(static_cast<float*>(p));
}

Tensor::Tensor(Shape shape, Layout layout) : shape_(shape), layout_(layout) {
  for (std::int64_t d : shape.dims)
    if (d < 0) throw std::bad_alloc();
  // Element count overflow means "more memory than exists": report it as such.
  std::int64_t elems = 1;
  for (std::int64_t d : shape.dims) {
    if (d != 0 && elems > std::numeric_limits<std::int64_t>::max() / 4 / d) throw std::bad_alloc();
    elems *= d;
  }
  data_ = aligned_floats(static_cast<std::size_t>(elems));
}

}  // namespace convlab
