// Blocked activation layouts for the SIMD kernels, kept in one place.
//
// NCHWc ("channel-blocked", oneDNN's nChw16c when c = 16): channels are split into blocks of
// `block` (the SIMD width in floats) and a block's values for one pixel are contiguous, so one
// aligned vector load gives one pixel's `block` channels. The channel count is padded up to the
// block with zeros, which lets kernels handle any C without a tail loop: the padded channels
// multiply zero weights.
#pragma once

#include <cstdint>

namespace convlab::cpu {

// One image in NCHWc with its spatial padding materialised as zeros, so a convolution reading it
// needs no bounds checks: every tap of every output pixel lands inside the padded image.
struct PaddedBlockedImage {
  std::int64_t channels, height, width;  // the unpadded NCHW image
  std::int64_t pad_h, pad_w;
  std::int64_t block;
  // More zeros below and to the right, for kernels whose last tile reads past the padding.
  std::int64_t extra_h = 0, extra_w = 0;

  std::int64_t channel_blocks() const { return (channels + block - 1) / block; }
  std::int64_t padded_height() const { return height + 2 * pad_h + extra_h; }
  std::int64_t padded_width() const { return width + 2 * pad_w + extra_w; }
  std::int64_t block_stride() const { return padded_height() * padded_width() * block; }  // between channel blocks
  std::int64_t row_stride() const { return padded_width() * block; }
  std::int64_t elems() const { return channel_blocks() * block_stride(); }
};

// Writes padded row `padded_row` (all channel blocks, borders included) of `image` from the
// NCHW image `nchw` (channels x height x width floats). Row-wise so callers can split an image
// between threads by rows, the same way they split the convolution that reads it.
void nchw_to_padded_nchwc_row(const float* nchw, const PaddedBlockedImage& image, std::int64_t padded_row,
                              float* blocked);

}  // namespace convlab::cpu
