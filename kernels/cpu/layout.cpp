#include "kernels/cpu/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace convlab::cpu {

namespace {
using Vec = xsimd::batch<float>;
using Index = xsimd::batch<std::int32_t>;

#if defined(__AVX512F__)
// 16 channels x 16 pixels (rows `plane` floats apart) -> 16 pixels x 16 channels, in registers:
// 16 loads, 64 shuffles, 16 stores, where gathers cost ~30 cycles each (measured: ~10% of a
// cpu.02 run). xsimd 8.1 has no transpose, hence the intrinsics; other ISAs gather.
// The masked forms with an all-ones mask: the plain unpacks and shuffles pass GCC 12 an
// undefined operand that -Wuninitialized reports.
__m512 unpack_lo_ps(__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, 0xffff, a, b); }
__m512 unpack_hi_ps(__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, 0xffff, a, b); }
__m512 unpack_lo_pd(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpacklo_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
__m512 unpack_hi_pd(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpackhi_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
template <int kLanes>
__m512 shuffle_lanes(__m512 a, __m512 b) { return _mm512_mask_shuffle_f32x4(a, 0xffff, a, b, kLanes); }
void transpose_16x16(const float* in, std::int64_t plane, float* out) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(in + i * plane);
  for (int i = 0; i < 16; i += 2) {  // interleave pairs of channels: 1-float granules
    t[i] = unpack_lo_ps(r[i], r[i + 1]);
    t[i + 1] = unpack_hi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // 2-float granules
    r[i] = unpack_lo_pd(t[i], t[i + 2]);
    r[i + 1] = unpack_hi_pd(t[i], t[i + 2]);
    r[i + 2] = unpack_lo_pd(t[i + 1], t[i + 3]);
    r[i + 3] = unpack_hi_pd(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8)  // 128-bit lanes
    for (int i = 0; i < 4; ++i) {
      t[h + i] = shuffle_lanes<0x88>(r[h + i], r[h + i + 4]);
      t[h + i + 4] = shuffle_lanes<0xdd>(r[h + i], r[h + i + 4]);
    }
  for (int i = 0; i < 8; ++i) {  // 256-bit halves
    r[i] = shuffle_lanes<0x88>(t[i], t[i + 8]);
    r[i + 8] = shuffle_lanes<0xdd>(t[i], t[i + 8]);
  }
  for (int i = 0; i < 16; ++i) _mm512_store_ps(out + i * 16, r[i]);
}
#endif
}  // namespace

std::unique_ptr<float[], detail::AlignedFree> pack_blocked_weights(std::span<const float> weight, std::int64_t outs,
                                                                   std::int64_t block) {
  const std::int64_t inner = static_cast<std::int64_t>(weight.size()) / outs, blocks = (outs + block - 1) / block;
  auto packed = aligned_floats(static_cast<std::size_t>(blocks * inner * block));  // zeroed
  for (std::int64_t o = 0; o < outs; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      packed[((o / block) * inner + i) * block + o % block] = weight[o * inner + i];
  return packed;
}

std::unique_ptr<float[], detail::AlignedFree> pack_blocked_bias(std::span<const float> bias, std::int64_t outs,
                                                                std::int64_t block) {
  auto packed = aligned_floats(static_cast<std::size_t>((outs + block - 1) / block * block));  // zeroed
  std::copy(bias.begin(), bias.end(), packed.get());
  return packed;
}

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
      std::int64_t x = 0;
#if defined(__AVX512F__)
      if (blk == 16)
        for (; x + 16 <= image.width; x += 16) transpose_16x16(in + x, plane, interior + x * blk);
#endif
      for (; x < image.width; ++x) Vec::gather(in + x, lanes).store_aligned(interior + x * blk);
      continue;
    }
    // A tail block (zero lanes for the missing channels) or a border row: zero all, copy the rest.
    std::fill(out, out + wp * blk, 0.0f);
    for (std::int64_t cc = 0; cc < real; ++cc)
      for (std::int64_t x = 0; x < image.width; ++x) interior[x * blk + cc] = in[cc * plane + x];
  }
}

}  // namespace convlab::cpu
