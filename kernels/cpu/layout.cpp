#include "kernels/cpu/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>
#if defined(__SSE2__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace convlab::cpu {

namespace {
using Vec = xsimd::batch<float>;
using Index = xsimd::batch<std::int32_t>;

#if defined(__AVX512F__)
// 16 channels x `pixels` (<= 16) pixels (rows `plane` floats apart) -> pixels x 16 channels:
// 16 loads, 64 shuffles, `pixels` stores, where gathers cost ~30 cycles each (measured: ~10% of
// a cpu.02 run). Masked loads for a row's last < 16 pixels (they never touch memory past the
// row's end), so rows narrower than 16 pixels (8x8 maps) do not gather either. Other ISAs gather.
void transpose_pixels(const float* in, std::int64_t plane, float* out, std::int64_t pixels) {
  const auto mask = static_cast<__mmask16>((1u << pixels) - 1);
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_maskz_loadu_ps(mask, in + i * plane);
  transpose_16x16(r);
  for (int i = 0; i < pixels; ++i) _mm512_store_ps(out + i * 16, r[i]);
}
#endif
#if defined(__AVX2__) && !defined(__AVX512F__)
// The same for 8 channels x 8 pixels with AVX2 (full 8-pixel pieces of a row; the tail gathers).
void transpose_8_pixels(const float* in, std::int64_t plane, float* out) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * plane);
  transpose_8x8(r);
  for (int i = 0; i < 8; ++i) _mm256_store_ps(out + i * 8, r[i]);
}
#endif
// kC channel planes (`plane` floats apart) -> `width` pixels of kC interleaved channels.
template <int kC>
void interleave_channels(const float* in, std::int64_t plane, std::int64_t width, float* out) {
  for (std::int64_t x = 0; x < width; ++x)
    for (int cc = 0; cc < kC; ++cc) out[x * kC + cc] = in[cc * plane + x];
}

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

namespace {
// How many rows ahead a copy asks for its NCHW input lines, where it does (prefetch_input_rows):
// 2, 4 and 8 measured the same (cpu.02 on mb32ic64ih56oc64oh56kh3ph1, Zen 5).
constexpr std::int64_t kPrefetchRows = 2;
}  // namespace

void nchw_to_padded_nchwc_row(const float* nchw, const PaddedBlockedImage& image, std::int64_t cb,
                              std::int64_t padded_row, float* blocked) {
  const std::int64_t blk = image.block, wp = image.padded_width();
  const std::int64_t y = padded_row - image.pad_h;  // row in the unpadded image
  const std::int64_t plane = image.height * image.width;
  const bool inside_rows = y >= 0 && y < image.height;
  float* out = blocked + cb * image.block_stride() + padded_row * image.row_stride();
  const std::int64_t real = inside_rows ? std::clamp<std::int64_t>(image.channels - cb * blk, 0, blk) : 0;
  const float* in = nchw + cb * blk * plane + y * image.width;
  float* interior = out + image.pad_w * blk;
  if (const std::int64_t ahead = y + kPrefetchRows;  // a full block's `blk` planes, inside the image
      image.prefetch_rows && image.channels >= (cb + 1) * blk && ahead >= 0 && ahead < image.height)
    prefetch_lines<false>(in + kPrefetchRows * image.width, blk, plane, image.width);
  // A full block of real channels is one gather per pixel: lane cc reads channel cc's plane.
  if (real == blk && blk == Vec::size && (blk - 1) * plane <= std::numeric_limits<std::int32_t>::max()) {
    std::fill(out, interior, 0.0f);  // left and right borders only
    std::fill(interior + image.width * blk, out + wp * blk, 0.0f);
    std::int64_t x = 0;
#if defined(__AVX512F__)
    if (blk == 16)
      for (; x < image.width; x += 16)
        transpose_pixels(in + x, plane, interior + x * blk, std::min<std::int64_t>(16, image.width - x));
#endif
#if defined(__AVX2__) && !defined(__AVX512F__)
    if (blk == 8)
      for (; x + 8 <= image.width; x += 8) transpose_8_pixels(in + x, plane, interior + x * blk);
#endif
    if (x == image.width) return;  // all transposed: no gather
    alignas(64) std::int32_t offsets[Vec::size];
    for (std::size_t cc = 0; cc < Vec::size; ++cc) offsets[cc] = static_cast<std::int32_t>(cc * plane);
    const Index lanes = Index::load_aligned(offsets);
    for (; x < image.width; ++x) Vec::gather(in + x, lanes).store_aligned(interior + x * blk);
    return;
  }
  // Few channels, all real (a strided first layer's 3, copied unpadded: input_block in cpu.02):
  // pixel by pixel, which the compiler turns into shuffles (channel by channel, every store was a
  // scalar one, blk floats from the last: twice the copy's time on a 224 x 224 first layer).
  if (real == blk && blk < static_cast<std::int64_t>(Vec::size)) {
    std::fill(out, interior, 0.0f);
    std::fill(interior + image.width * blk, out + wp * blk, 0.0f);
    switch (blk) {
      case 1: std::copy_n(in, image.width, interior); break;
      case 3: interleave_channels<3>(in, plane, image.width, interior); break;
      case 4: interleave_channels<4>(in, plane, image.width, interior); break;
      default:
        for (std::int64_t x = 0; x < image.width; ++x)
          for (std::int64_t cc = 0; cc < blk; ++cc) interior[x * blk + cc] = in[cc * plane + x];
    }
    return;
  }
  // A tail block (zero lanes for the missing channels) or a border row: zero all, copy the rest.
  std::fill(out, out + wp * blk, 0.0f);
  for (std::int64_t cc = 0; cc < real; ++cc)
    for (std::int64_t x = 0; x < image.width; ++x) interior[x * blk + cc] = in[cc * plane + x];
}

namespace {
// in[0, 8) to even[0, 4) and odd[0, 4): two shuffles (NEON: one deinterleaving load).
void split_8(const float* in, float* even, float* odd) {
#if defined(__SSE2__)
  const __m128 lo = _mm_loadu_ps(in), hi = _mm_loadu_ps(in + 4);
  _mm_storeu_ps(even, _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm_storeu_ps(odd, _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
#elif defined(__ARM_NEON)
  const float32x4x2_t pairs = vld2q_f32(in);
  vst1q_f32(even, pairs.val[0]);
  vst1q_f32(odd, pairs.val[1]);
#else
  for (int i = 0; i < 4; ++i) even[i] = in[2 * i], odd[i] = in[2 * i + 1];
#endif
}
}  // namespace

// Even input columns go to one phase, odd ones to the other, 8 floats at a time; the last 8
// overlap the ones before. A plain every-other-float loop made cpu.07 on mobilenet-v2's strided
// layers 0.35-0.91x oneDNN at batch 1, this 0.77-1.19x.
void split_row_phases(const float* in, std::int64_t width, std::int64_t pad, std::int64_t phase_width, float* to) {
  float* even = to + pad % 2 * phase_width + pad / 2;
  float* odd = to + (pad + 1) % 2 * phase_width + (pad + 1) / 2;
  std::int64_t x = 0;  // columns [0, x) copied, x even
  if (width >= 8) {
    for (; x + 8 <= width; x += 8) split_8(in + x, even + x / 2, odd + x / 2);
    if (x < width) {  // the last 8, from an even column so that the phases stay
      x = (width - 8) & ~std::int64_t{1};
      split_8(in + x, even + x / 2, odd + x / 2);
      x += 8;
    }
  }
  for (; x < width; ++x) (x % 2 == 0 ? even : odd)[x / 2] = in[x];
}

}  // namespace convlab::cpu
