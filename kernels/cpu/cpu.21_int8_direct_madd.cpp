// cpu.21_int8_direct_madd: direct int8 convolution on 16-bit pairs (vpmaddwd), requantised in
// the epilogue.
//
// Changes against cpu.02_direct_xsimd (its FP32 twin): the same register tile of output-channel
// blocks x pixels (in raster order over the plane, across row ends), but each step multiplies two
// input channels at once. run() widens the quint8 input to int16 with the zero point subtracted
// (padding becomes 0, the real 0), two channels per 32-bit word, pixels in HWC order; plan packs
// the qint8 weights to the same pairs.
// One vpmaddwd then does two multiply-adds per output channel lane (int16 x int16 -> int32 pair
// sums, exact: |x - zp| <= 255, |w| <= 128), so a register holds 2x the MACs of an FP32 FMA.
// Why not u8 x s8 (vpmaddubsw): its int16 pair sums saturate (255 * 127 * 2 > 32767), changing
// results, unless every u8 is under 128; VNNI's vpdpbusd has no such limit and is the next lesson.
// Epilogue: the accumulators' lanes are output channels, so each block's multiplier and offset
// are one vector: convert, FMA, clamp, round (half to even), add the zero point, clamp — the
// oracle's arithmetic exactly (kernels/common/quantize.hpp), so outputs are the oracle's bytes.
// Bound: the int16-pair rate `convlab peak` measures (vpmaddwd + vpaddd): on a Zen 3 328 GOP/s,
// 1.6x the FP32 FMA peak and 85% of the vpmaddubsw int8 peak (the same multiplies per product).
// Measured: 266 GOP/s, 69% of the int8 peak, 0.85x onednn.conv_int8 on mb32ic64ih56oc64oh56kh3ph1
// (2-core Zen 3 VM, AVX2, 2026-12-04).
// Run: build/convlab conv --precision int8 --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.21_int8_direct_madd,onednn.conv_int8 --interleave
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"
#include "kernels/cpu/layout.hpp"  // transpose_8x8

namespace convlab::cpu {

namespace {

// The register tile: output-channel blocks x pixels, as many accumulators as the registers allow.
#if defined(__AVX512BW__)
constexpr int kKBlocks = 4, kTile = 6;  // 24 accumulators of 32 registers
#else
constexpr int kKBlocks = 2, kTile = 6;  // AVX2: 12 accumulators + 2 weights + 1 input of 16
#endif
using namespace int8;
constexpr int kBlockPairs = kLanes * 2;  // int16 values per weight vector: kLanes channels x 2

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Int8DirectConv final : public PlannedInt8Conv {
 public:
  Int8DirectConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), pairs_(ceil_div(p.c, 2)), groups_(ceil_div(p.k, kLanes * kKBlocks)),
        tiles_(ceil_div(oh_ * ow_, kTile)), hp_(p.padded_h()), wp_(p.padded_w()),
        input_zero_point_(w.input.zero_point) {
    // Weights: [group][r][s][pair][block][lane][2] int16, zeros past K and past C.
    const std::int64_t k_padded = groups_ * kKBlocks * kLanes;
    weight_.assign(static_cast<std::size_t>(k_padded * p.r * p.s * pairs_ * 2), 0);
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t c = 0; c < p.c; ++c)
        for (std::int64_t r = 0; r < p.r; ++r)
          for (std::int64_t s = 0; s < p.s; ++s) {
            const std::int64_t g = k / (kKBlocks * kLanes), block = k / kLanes % kKBlocks, lane = k % kLanes;
            const std::int64_t at = ((((g * p.r + r) * p.s + s) * pairs_ + c / 2) * kKBlocks + block) * kBlockPairs;
            weight_[static_cast<std::size_t>(at + lane * 2 + c % 2)] = w.weight[((k * p.c + c) * p.r + r) * p.s + s];
          }
    requantize_ = make_requantization(w, p.k, e.activation);
    requantize_.multiplier.resize(static_cast<std::size_t>(k_padded), 0.0f);  // whole vectors past K
    requantize_.offset.resize(static_cast<std::size_t>(k_padded), 0.0f);
  }

  std::size_t weight_bytes() const override {
    return weight_.size() * sizeof(std::int16_t) + 2 * requantize_.multiplier.size() * sizeof(float);
  }
  // The widened, padded input: int16 pairs, one 32-bit word per (image, row, column, pair).
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(p_.n * hp_ * wp_ * pairs_) * 4; }
  bool changes_layout() const override { return true; }
  void run_layout_changes_only(const std::uint8_t* input, std::uint8_t*, void* workspace) const override {
    widen_input(input, static_cast<std::int32_t*>(workspace));
  }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    auto* packed = static_cast<std::int32_t*>(workspace);
    widen_input(input, packed);
#pragma omp parallel for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t g = 0; g < groups_; ++g)
        for (std::int64_t t = 0; t < tiles_; ++t) tile(packed + n * hp_ * wp_ * pairs_, output, n, g, t);
  }

 private:
  // quint8 NCHW -> int16 (x - zero point) pairs, HWC, zero-padded: rows are read by many tiles
  // and taps, so the subtraction and the layout change are paid once per input value.
  void widen_input(const std::uint8_t* input, std::int32_t* packed) const {
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t yp = 0; yp < hp_; ++yp) {
        std::int16_t* row = reinterpret_cast<std::int16_t*>(packed + (n * hp_ + yp) * wp_ * pairs_);
        std::fill(row, row + wp_ * pairs_ * 2, std::int16_t{0});
        const std::int64_t y = yp - p_.pad_h;
        if (y < 0 || y >= p_.h) continue;
        const std::uint8_t* image_row = input + (n * p_.c * p_.h + y) * p_.w;
        std::int16_t* pixels = row + p_.pad_w * pairs_ * 2;
        const std::int64_t whole = widen_blocks(image_row, reinterpret_cast<std::int32_t*>(pixels));
        for (std::int64_t c = 0; c < p_.c; ++c) {  // what the blocks left: channel and column tails
          const std::uint8_t* in = image_row + c * p_.h * p_.w;
          std::int16_t* out = pixels + c;  // pair c / 2, half c % 2
          for (std::int64_t x = c < whole ? p_.w / 8 * 8 : 0; x < p_.w; ++x)
            out[x * pairs_ * 2] = static_cast<std::int16_t>(in[x] - input_zero_point_);
        }
      }
  }

  // The widening in blocks of 8 pairs (16 channels) x 8 pixels: each channel pair's 8 pixels
  // widened and interleaved into 8 words, then an 8 x 8 transpose of words, so each pixel's 8
  // pairs are one store. The scalar loop's stores, 2 bytes each and pairs x 4 bytes apart, took a
  // sixth to a quarter of a 1 x 1 layer's time (perf), a quarter more in a build that links CUDA,
  // where the heap put the buffers elsewhere. Returns the channels covered (a multiple of 16),
  // their columns up to the last multiple of 8.
  std::int64_t widen_blocks(const std::uint8_t* image_row, std::int32_t* pixels) const {
#if defined(__AVX2__)
    const std::int64_t channels = p_.c / 16 * 16, plane = p_.h * p_.w;
    const __m128i zp = _mm_set1_epi16(static_cast<std::int16_t>(input_zero_point_));
    for (std::int64_t c0 = 0; c0 < channels; c0 += 16)
      for (std::int64_t x0 = 0; x0 + 8 <= p_.w; x0 += 8) {
        __m256 words[8];
        for (int q = 0; q < 8; ++q) {
          const std::uint8_t* in = image_row + (c0 + 2 * q) * plane + x0;
          const __m128i even = _mm_sub_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in))), zp);
          const __m128i odd =
              _mm_sub_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + plane))), zp);
          words[q] = _mm256_castsi256_ps(_mm256_set_m128i(_mm_unpackhi_epi16(even, odd), _mm_unpacklo_epi16(even, odd)));
        }
        transpose_8x8(words);  // words[x]: pixel x0 + x's pairs c0 / 2 .. c0 / 2 + 7
        for (int x = 0; x < 8; ++x) _mm256_storeu_ps(reinterpret_cast<float*>(pixels + (x0 + x) * pairs_ + c0 / 2), words[x]);
      }
    return channels;
#else
    (void)image_row, (void)pixels;
    return 0;
#endif
  }

  // Tile t of image n's output plane, channels of group g. Tiles run over the plane in raster
  // order, across row ends: an 8-pixel row would otherwise leave a third of a 6-pixel tile idle.
  void tile(const std::int32_t* image, std::uint8_t* output, std::int64_t n, std::int64_t g, std::int64_t t) const {
    const std::int16_t* wg = weight_.data() + g * p_.r * p_.s * pairs_ * kKBlocks * kBlockPairs;
    const std::int64_t p0 = t * kTile;
    std::int64_t at[kTile];  // each pixel's top-left input word; the last tile's extra ones repeat the last pixel
    for (int px = 0; px < kTile; ++px) {
      const std::int64_t pixel = std::min(p0 + px, oh_ * ow_ - 1);
      at[px] = ((pixel / ow_) * p_.stride_h * wp_ + (pixel % ow_) * p_.stride_w) * pairs_;
    }
    IVec acc[kKBlocks][kTile];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
    CONVLAB_TILE_LOOP
    for (auto& block : acc) {
      CONVLAB_TILE_LOOP
      for (IVec& a : block) a = zero();
    }
    for (std::int64_t r = 0; r < p_.r; ++r)
      for (std::int64_t s = 0; s < p_.s; ++s) {
        const std::int32_t* in[kTile];
        for (int px = 0; px < kTile; ++px) in[px] = image + at[px] + (r * p_.dilation_h * wp_ + s * p_.dilation_w) * pairs_;
        const std::int16_t* w = wg + (r * p_.s + s) * pairs_ * kKBlocks * kBlockPairs;
        for (std::int64_t c2 = 0; c2 < pairs_; ++c2, w += kKBlocks * kBlockPairs) {
          IVec b[kKBlocks];
          CONVLAB_TILE_LOOP
          for (int j = 0; j < kKBlocks; ++j) b[j] = load(w + j * kBlockPairs);
          CONVLAB_TILE_LOOP
          for (int px = 0; px < kTile; ++px) {
            const IVec a = splat(in[px][c2]);
            CONVLAB_TILE_LOOP
            for (int j = 0; j < kKBlocks; ++j) acc[j][px] = madd_add(acc[j][px], a, b[j]);
          }
        }
      }
    store(acc, output, n, g, p0);
  }

  CONVLAB_TILE_INLINE void store(const IVec (&acc)[kKBlocks][kTile], std::uint8_t* output, std::int64_t n, std::int64_t g,
             std::int64_t p0) const {
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const std::int64_t pixels = std::min<std::int64_t>(kTile, oh_ * ow_ - p0);
    alignas(64) std::int32_t q[kTile][kLanes];
    CONVLAB_TILE_LOOP
    for (int j = 0; j < kKBlocks; ++j) {
      const std::int64_t k0 = (g * kKBlocks + j) * kLanes;
      if (k0 >= p_.k) break;
      CONVLAB_TILE_LOOP
      for (int px = 0; px < kTile; ++px) {
        if (px >= pixels) break;  // not in the loop's condition: its count stays a constant (tile_loop.hpp)
        requantize(acc[j][px], &requantize_.multiplier[k0], &requantize_.offset[k0], zp, lo, hi, q[px]);
      }
      for (std::int64_t lane = 0; lane < kLanes && k0 + lane < p_.k; ++lane) {
        std::uint8_t* out = output + (n * p_.k + k0 + lane) * oh_ * ow_ + p0;
        for (int px = 0; px < pixels; ++px) out[px] = static_cast<std::uint8_t>(q[px][lane]);
      }
    }
  }

  ConvProblem p_;
  std::int64_t oh_, ow_, pairs_, groups_, tiles_, hp_, wp_;
  std::int32_t input_zero_point_;
  std::vector<std::int16_t> weight_;
  Requantization requantize_;
};

}  // namespace

std::string int8_direct_madd_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return "groups must be 1 (depthwise and grouped int8 are other kernels)";
  return {};
}

std::unique_ptr<PlannedInt8Conv> int8_direct_madd_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_direct_madd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.21_int8_direct_madd cannot run {}: {}", to_string(p), why));
  return std::make_unique<Int8DirectConv>(p, w, e);
}

}  // namespace convlab::cpu
