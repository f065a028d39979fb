#include "kernels/cpu/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace convlab::cpu {

namespace {
using Vec = xsimd::batch<float>;
using Index = xsimd::batch<std::int32_t>;
}  // namespace

void nchw_to_padded_nchwc_row(const float* nchw, const PaddedBlockedImage& image, std::int64_t padded_row,
                              float* blocked) {
  const std::int64_t blk = image.block, wp = image.padded_width();
  const std::int64_t y = padded_row - image.pad_h;  // row in the unpadded image
  const std::int64_t plane = image.height * image.width;
  const bool inside_rows = y >= 0 && y < image.height;
  // A full block of real channels is one gather per pixel: lane cc reads channel cc's plane.
  const bool gather = blk == Vec::size && (blk - 1) * plane <= std::numeric_limits<std::int32_t>::max();
  alignas(64) std::int32_t offsets[Vec::size];
  for (std::size_t cc = 0; cc < Vec::size; ++cc) offsets[cc] = static_cast<std::int32_t>(cc * plane);
  const Index lanes = Index::load_aligned(offsets);

  for (std::int64_t cb = 0; cb < image.channel_blocks(); ++cb) {
    float* out = blocked + cb * image.block_stride() + padded_row * image.row_stride();
    const std::int64_t real = inside_rows ? std::clamp<std::int64_t>(image.channels - cb * blk, 0, blk) : 0;
    const float* in = nchw + cb * blk * plane + y * image.width;
    float* interior = out + image.pad_w * blk;
    if (real == blk && gather) {
      std::fill(out, interior, 0.0f);  // left and right borders only
      std::fill(interior + image.width * blk, out + wp * blk, 0.0f);
      for (std::int64_t x = 0; x < image.width; ++x) Vec::gather(in + x, lanes).store_aligned(interior + x * blk);
      continue;
    }
    // A tail block (zero lanes for the missing channels) or a border row: zero all, copy the rest.
    std::fill(out, out + wp * blk, 0.0f);
    for (std::int64_t cc = 0; cc < real; ++cc)
      for (std::int64_t x = 0; x < image.width; ++x) interior[x * blk + cc] = in[cc * plane + x];
  }
}

}  // namespace convlab::cpu
