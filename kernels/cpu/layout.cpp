#include "kernels/cpu/layout.hpp"

#include <algorithm>

namespace convlab::cpu {

void nchw_to_padded_nchwc_row(const float* nchw, const PaddedBlockedImage& image, std::int64_t padded_row,
                              float* blocked) {
  const std::int64_t blk = image.block, wp = image.padded_width();
  const std::int64_t y = padded_row - image.pad_h;  // row in the unpadded image
  const bool inside_rows = y >= 0 && y < image.height;
  for (std::int64_t cb = 0; cb < image.channel_blocks(); ++cb) {
    float* out = blocked + cb * image.block_stride() + padded_row * image.row_stride();
    const std::int64_t real = inside_rows ? std::clamp<std::int64_t>(image.channels - cb * blk, 0, blk) : 0;
    // Zero the whole row first: left/right borders, padded channels, or all of a border row.
    if (real < blk || image.pad_w > 0) std::fill(out, out + wp * blk, 0.0f);
    for (std::int64_t cc = 0; cc < real; ++cc) {
      const float* in = nchw + ((cb * blk + cc) * image.height + y) * image.width;
      float* o = out + image.pad_w * blk + cc;
      for (std::int64_t x = 0; x < image.width; ++x) o[x * blk] = in[x];
    }
  }
}

}  // namespace convlab::cpu
