// cpu.23_int8_direct_vnni: direct int8 convolution on u8 x s8 channel quads (VNNI's vpdpbusd),
// requantised in the epilogue.
//
// Changes against cpu.21_int8_direct_madd: each step multiplies four input channels at once, on
// the bytes themselves. run() only transposes the quint8 input to HWC (four channels per 32-bit
// word), padded with the input zero point; plan packs the qint8 weights to the same quads.
// One vpdpbusd does four u8 x s8 multiply-adds per output channel lane into int32, exactly (no
// int16 intermediate: cpu.21's reason to widen is gone), so a register holds 4x the MACs of an
// FP32 FMA and 2x cpu.21's, and the input copy is a quarter of cpu.21's widened one.
// The zero point: vpdpbusd multiplies the raw u8 x, not x - zp. So
//   sum (x - zp) * w = sum x * w - zp * sum w,
// and zp * sum w (over C x R x S, per output channel) is the compensation plan precomputes; the
// epilogue subtracts it, one vpsubd per accumulator, before the requantisation. Padding holds zp,
// the real 0, so its taps cancel in the same subtraction.
// Without VNNI the same sums take two vpmaddwd on the widened bytes, or, in a run whose input bytes
// are all under 128, vpmaddubsw + vpmaddwd (int8_simd.hpp's seven-bit path): the same bytes everywhere.
// Epilogue and tile as cpu.21 (output-channel blocks x pixels in raster order across row ends),
// but plan measures the tile's shape (4 x 6, 4 x 7, 3 x 7, 2 x 12, 2 x 14, ...: kTiles) on each layer.
// Measured: 1.05-1.15x onednn.conv_int8 on mb32ic64ih56oc64oh56kh3ph1, 57-67% of the int8 peak
// (Zen 5 VM, VNNI, 2026-12-02); 0.98-1.08x on 8 x 8 maps at batch 32 (Ice Lake VM, 2026-12-03);
// without VNNI, 1.15-1.18x over the 50 dense network layers at batch 1 (Zen 3 VM, 2026-12-07).
// Run: build/convlab conv --precision int8 --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.23_int8_direct_vnni,onednn.conv_int8 --interleave
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/fastest_variant.hpp"
#include "kernels/cpu/int8_direct_vnni.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

// The register tiles: k_blocks output-channel blocks x pixels. Plan measures those of the fewest
// blocks that cover K (up to the maximum: padding K = 16 to 64 lanes would waste three quarters of
// the work) and, where K has more blocks, those of half the maximum (tile_choices). The pixels fill
// the registers, but at most 16, one block of the epilogue's transpose: measured on a Zen 5, 1 x 16
// beat 1 x 24 on 16 channels. With 32 registers, 24 accumulators leave the weights and an input one
// each; so do 2 x 14's 28 (31 in all), while 4 x 7 needs 33 and GCC keeps one accumulator in
// memory, a load and a store per 28 vpdpbusd (folding the input's broadcast into each vpdpbusd
// would load it 4 times instead).
// Which is fastest depends on the layer, so plan measures (docs/kernel-notes.md, "cpu.23's register
// tile"): on a Zen 5 VM 2 x 14 took 0.75-0.79x 4 x 6's time on a 1 x 1 layer of 14 x 14 and
// 0.89-0.93x on those of 7 x 7, 2 x 12 0.93x on a 3 x 3 layer of 28 x 28 at batch 1, and 4 x 6
// led on one of 56 x 56 at batch 1. 3 x 8, 3 x 9 and 1 x 16 led on none of these, which have 4
// blocks or more: plan measures them only where K has 3 blocks, or 1. 3 x 7 it measures from 4
// blocks up: 7 pixels divide every map of 7 x 7 to 56 x 56, in 25 registers, and on the 3 x 3
// layers of 7 x 7 it took 0.93-0.94x the time of the tile chosen without it (docs/kernel-notes.md).
#if defined(__AVX512BW__)
constexpr std::array kTiles = {VnniTile{4, 6}, VnniTile{4, 7}, VnniTile{3, 7}, VnniTile{3, 8}, VnniTile{3, 9},
                               VnniTile{2, 12}, VnniTile{2, 14}, VnniTile{1, 16}};
constexpr int kMaxKBlocks = 4;
#else
constexpr std::array kTiles = {VnniTile{2, 6}, VnniTile{1, 12}};  // AVX2: 12 accumulators of 16 registers
constexpr int kMaxKBlocks = 2;
#endif
using namespace int8;
constexpr int kBlockBytes = kLanes * 4;  // s8 weights per vector: kLanes channels x 4

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// "4 x 6": in explanations, error messages and cpu.auto's file.
std::string tile_name(VnniTile tile) { return fmt::format("{} x {}", tile.k_blocks, tile.pixels); }

std::size_t tile_index(VnniTile tile) {
  for (std::size_t i = 0; i < kTiles.size(); ++i)
    if (kTiles[i].k_blocks == tile.k_blocks && kTiles[i].pixels == tile.pixels) return i;
  throw InputError(fmt::format("cpu.23_int8_direct_vnni: no {} register tile in this build", tile_name(tile)));
}

// The tiles plan measures for p, in kTiles' order: the first is the one it takes unmeasured.
std::vector<VnniTile> tile_choices(const ConvProblem& p) {
  const std::int64_t blocks = ceil_div(p.k, kLanes), fewest = std::min<std::int64_t>(kMaxKBlocks, blocks),
                     half = kMaxKBlocks / 2;
  const auto measured = [&](const VnniTile& t) {
    return t.k_blocks == fewest || (t.k_blocks == half && blocks > half) ||
           (t.k_blocks == 3 && t.pixels == 7 && blocks > 3);
  };
  std::vector<VnniTile> choices;
  for (const VnniTile& t : kTiles)
    if (measured(t)) choices.push_back(t);
  return choices;
}

class Int8VnniConv final : public PlannedInt8Conv {
 public:
  Int8VnniConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e, VnniTile tile)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), quads_(ceil_div(p.c, 4)), tile_(tile_index(tile)),
        k_blocks_(tile.k_blocks), groups_(ceil_div(p.k, kLanes * k_blocks_)), tiles_(ceil_div(oh_ * ow_, tile.pixels)),
        hp_(p.padded_h()), wp_(p.padded_w()),
        input_zero_point_(static_cast<std::uint8_t>(w.input.zero_point)) {
    // Weights: [group][r][s][quad][block][lane][4] s8, zeros past K and past C.
    const std::int64_t k_padded = groups_ * k_blocks_ * kLanes;
    weight_.assign(static_cast<std::size_t>(k_padded * p.r * p.s * quads_ * 4), 0);
    compensation_.assign(static_cast<std::size_t>(k_padded), 0);
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t c = 0; c < p.c; ++c)
        for (std::int64_t r = 0; r < p.r; ++r)
          for (std::int64_t s = 0; s < p.s; ++s) {
            const std::int64_t g = k / (k_blocks_ * kLanes), block = k / kLanes % k_blocks_, lane = k % kLanes;
            const std::int64_t at = ((((g * p.r + r) * p.s + s) * quads_ + c / 4) * k_blocks_ + block) * kBlockBytes;
            const std::int8_t v = w.weight[((k * p.c + c) * p.r + r) * p.s + s];
            weight_[static_cast<std::size_t>(at + lane * 4 + c % 4)] = v;
            compensation_[static_cast<std::size_t>(k)] += w.input.zero_point * v;
          }
    requantize_ = make_requantization(w, p.k, e.activation);
    requantize_.multiplier.resize(static_cast<std::size_t>(k_padded), 0.0f);  // whole vectors past K
    requantize_.offset.resize(static_cast<std::size_t>(k_padded), 0.0f);
  }

  std::size_t weight_bytes() const override {
    return weight_.size() + (compensation_.size() + 2 * requantize_.multiplier.size()) * 4;
  }
  // The padded HWC input: one 32-bit word per (image, row, column, quad).
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(p_.n * hp_ * wp_ * quads_) * 4; }
  bool changes_layout() const override { return true; }
  void run_layout_changes_only(const std::uint8_t* input, std::uint8_t*, void* workspace) const override {
    pack_input(input, static_cast<std::int32_t*>(workspace));
  }

  std::string explain() const override { return explanation_; }
  void set_explanation(std::string why) { explanation_ = std::move(why); }
  // The tile, as the tile timings name it (fastest_variant.hpp).
  std::string name() const { return tile_name(kTiles[tile_]); }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    auto* packed = static_cast<std::int32_t*>(workspace);
    pack_input(input, packed);
    if (seven_bit_input(input, p_.input_elems(), input_zero_point_)) {
      run_tiles<true>(packed, output);
    } else {
      run_tiles<false>(packed, output);
    }
  }

 private:
  using TileFn = void (Int8VnniConv::*)(const std::int32_t*, std::uint8_t*, std::int64_t, std::int64_t, std::int64_t) const;
  template <bool kSevenBit, std::size_t... I>
  static constexpr std::array<TileFn, sizeof...(I)> tile_functions(std::index_sequence<I...>) {
    return {&Int8VnniConv::tile<kTiles[I].k_blocks, kTiles[I].pixels, kSevenBit>...};
  }

  template <bool kSevenBit>
  void run_tiles(const std::int32_t* packed, std::uint8_t* output) const {
    const TileFn tile = tile_functions<kSevenBit>(std::make_index_sequence<kTiles.size()>())[tile_];
#pragma omp parallel for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t g = 0; g < groups_; ++g)
        for (std::int64_t t = 0; t < tiles_; ++t) (this->*tile)(packed + n * hp_ * wp_ * quads_, output, n, g, t);
  }

  // quint8 NCHW -> HWC channel quads, padded with the zero point (padding and channels past C;
  // the latter meet zero weights). A pass over every input byte: 16 x 16 byte blocks are
  // transposed (int8_simd.hpp), the rest a word per quad. A row's last pixels (all of them in a
  // row under 16 wide) are transposed as a block too, which reads on into the next row, and only
  // their own pixels are kept: on 8 x 8 maps the word-per-quad loop was a sixth of the layer.
  void pack_input(const std::uint8_t* input, std::int32_t* packed) const {
    const std::uint32_t zp4 = std::uint32_t{input_zero_point_} * 0x01010101u;
    const std::int64_t plane_stride = p_.h * p_.w, full_blocks = p_.c / 16;
    const std::uint8_t* input_end = input + p_.input_elems();
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t yp = 0; yp < hp_; ++yp) {
        auto* row = reinterpret_cast<std::uint32_t*>(packed + (n * hp_ + yp) * wp_ * quads_);
        const std::int64_t y = yp - p_.pad_h;
        if (y < 0 || y >= p_.h) {
          std::fill(row, row + wp_ * quads_, zp4);
          continue;
        }
        std::fill(row, row + p_.pad_w * quads_, zp4);
        std::fill(row + (p_.pad_w + p_.w) * quads_, row + wp_ * quads_, zp4);
        const std::uint8_t* plane = input + (n * p_.c * p_.h + y) * p_.w;
        std::uint32_t* pixels = row + p_.pad_w * quads_;
        const std::int64_t x_blocks = p_.w / 16 * 16, tail = p_.w - x_blocks;
        for (std::int64_t b = 0; b < full_blocks; ++b) {
          const std::uint8_t* channels = plane + b * 16 * plane_stride;
          for (std::int64_t x = 0; x < x_blocks; x += 16)
            transpose_16x16(channels + x, plane_stride, reinterpret_cast<std::uint8_t*>(pixels + x * quads_ + b * 4),
                            quads_ * 4);
          if (tail == 0) continue;
          if (channels + 15 * plane_stride + x_blocks + 16 > input_end) {  // the block would read past the input
            pack_words(plane, pixels, x_blocks, p_.w, b * 4, zp4, b * 4 + 4);
            continue;
          }
          alignas(16) std::uint8_t by_pixel[16][16];
          transpose_16x16(channels + x_blocks, plane_stride, by_pixel[0], 16);
          for (std::int64_t x = 0; x < tail; ++x)
            std::memcpy(pixels + (x_blocks + x) * quads_ + b * 4, by_pixel[x], 16);
        }
        pack_words(plane, pixels, 0, p_.w, full_blocks * 4, zp4);  // channels past the blocks
      }
  }

  // Pixels [x0, x1), quads [q0, q1) (default: to the last), one word at a time.
  void pack_words(const std::uint8_t* plane, std::uint32_t* pixels, std::int64_t x0, std::int64_t x1, std::int64_t q0,
                  std::uint32_t zp4, std::int64_t q1 = -1) const {
    const std::int64_t plane_stride = p_.h * p_.w;
    if (q1 < 0) q1 = quads_;
    for (std::int64_t x = x0; x < x1; ++x)
      for (std::int64_t q = q0; q < q1; ++q) {
        std::uint32_t word = zp4;
        for (std::int64_t b = 0; b < 4 && q * 4 + b < p_.c; ++b)
          word = (word & ~(0xffu << (8 * b))) | std::uint32_t{plane[(q * 4 + b) * plane_stride + x]} << (8 * b);
        pixels[x * quads_ + q] = word;
      }
  }

  template <int kKBlocks, int kTile, bool kSevenBit>
  void tile(const std::int32_t* image, std::uint8_t* output, std::int64_t n, std::int64_t g, std::int64_t t) const {
    const std::int8_t* wg = weight_.data() + g * p_.r * p_.s * quads_ * kKBlocks * kBlockBytes;
    const std::int64_t p0 = t * kTile;
    // Each pixel's top-left input word; the last tile's extra ones repeat the last pixel. One
    // division per tile, then steps: a division per pixel costs as much as a small layer's taps.
    std::int64_t at[kTile], y = p0 / ow_, x = p0 % ow_;
    for (int px = 0; px < kTile; ++px) {
      at[px] = (y * p_.stride_h * wp_ + x * p_.stride_w) * quads_;
      if (p0 + px + 1 < oh_ * ow_ && ++x == ow_) x = 0, ++y;
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
        for (int px = 0; px < kTile; ++px) in[px] = image + at[px] + (r * p_.dilation_h * wp_ + s * p_.dilation_w) * quads_;
        const std::int8_t* w = wg + (r * p_.s + s) * quads_ * kKBlocks * kBlockBytes;
        for (std::int64_t c4 = 0; c4 < quads_; ++c4, w += kKBlocks * kBlockBytes) {
          IVec b[kKBlocks];
          CONVLAB_TILE_LOOP
          for (int j = 0; j < kKBlocks; ++j) b[j] = load(w + j * kBlockBytes);
          CONVLAB_TILE_LOOP
          for (int px = 0; px < kTile; ++px) {
            const IVec a = splat(in[px][c4]);
            CONVLAB_TILE_LOOP
            for (int j = 0; j < kKBlocks; ++j) acc[j][px] = dot4<kSevenBit>(acc[j][px], a, b[j]);
          }
        }
      }
    store(acc, output, n, g, p0);
  }

#if defined(__AVX2__) && !defined(__AVX512BW__)
  // Requantised and turned to bytes by channel in registers, 8 pixels at a time (int8_simd.hpp's
  // bytes_by_channel), so that each channel's pixels, contiguous in the NCHW output, are one store.
  template <int kKBlocks, int kTile>
  CONVLAB_TILE_INLINE void store(const IVec (&acc)[kKBlocks][kTile], std::uint8_t* output, std::int64_t n, std::int64_t g,
                                 std::int64_t p0) const {
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const std::int64_t pixels = std::min<std::int64_t>(kTile, oh_ * ow_ - p0);
    CONVLAB_TILE_LOOP
    for (int j = 0; j < kKBlocks; ++j) {
      const std::int64_t k0 = (g * kKBlocks + j) * kLanes;
      if (k0 >= p_.k) break;
      const IVec comp = load(&compensation_[static_cast<std::size_t>(k0)]);
      const float *m = &requantize_.multiplier[k0], *o = &requantize_.offset[k0];
      const std::int64_t lanes = std::min<std::int64_t>(kLanes, p_.k - k0);
      CONVLAB_TILE_LOOP
      for (int b = 0; b < kTile; b += 8) {
        const std::int64_t count = std::min<std::int64_t>(std::min(8, kTile - b), pixels - b);
        if (count <= 0) break;  // the layer's last tile ends before this group
        IVec q[8];
        CONVLAB_TILE_LOOP
        for (int i = 0; i < 8; ++i)
          q[i] = b + i < kTile ? requantize(sub(acc[j][std::min(b + i, kTile - 1)], comp), m, o, zp, lo, hi) : zero();
        std::uint64_t by_channel[8];
        bytes_by_channel(q, by_channel);
        for (std::int64_t lane = 0; lane < lanes; ++lane)
          store_low_bytes(by_channel[lane], count, output + (n * p_.k + k0 + lane) * oh_ * ow_ + p0 + b);
      }
    }
  }
#else
  // Requantised to bytes per pixel (lanes are channels), then transposed in 16 x 16 blocks so
  // that each channel's pixels, contiguous in the NCHW output, are one store: a byte store per
  // channel and pixel would cost as much as the multiply-adds on a layer of 16 channels.
  template <int kKBlocks, int kTile>
  CONVLAB_TILE_INLINE void store(const IVec (&acc)[kKBlocks][kTile], std::uint8_t* output, std::int64_t n, std::int64_t g,
             std::int64_t p0) const {
    constexpr int kRows = (kTile + 15) / 16 * 16;
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const std::int64_t pixels = std::min<std::int64_t>(kTile, oh_ * ow_ - p0);
    alignas(64) std::uint8_t by_pixel[kRows][16] = {}, by_channel[16][16];
    CONVLAB_TILE_LOOP
    for (int j = 0; j < kKBlocks; ++j) {
      const std::int64_t k0 = (g * kKBlocks + j) * kLanes;
      if (k0 >= p_.k) break;
      const IVec comp = load(&compensation_[static_cast<std::size_t>(k0)]);
      CONVLAB_TILE_LOOP
      for (int px = 0; px < kTile; ++px)
        requantize_bytes(sub(acc[j][px], comp), &requantize_.multiplier[k0], &requantize_.offset[k0], zp, lo, hi, by_pixel[px]);
      const std::int64_t lanes = std::min<std::int64_t>(kLanes, p_.k - k0);
      for (std::int64_t b = 0; b < pixels; b += 16) {
        transpose_16x16(by_pixel[b], 16, by_channel[0], 16);
        constexpr std::int64_t kChunk = std::min(16, kTile);
        const std::int64_t count = std::min<std::int64_t>(kChunk, pixels - b);
        for (std::int64_t lane = 0; lane < lanes; ++lane) {
          std::uint8_t* out = output + (n * p_.k + k0 + lane) * oh_ * ow_ + p0 + b;
          if (count == kChunk) {
            std::memcpy(out, by_channel[lane], kChunk);  // a constant size: one store, not a call
          } else {
            for (std::int64_t i = 0; i < count; ++i) out[i] = by_channel[lane][i];
          }
        }
      }
    }
  }
#endif

  ConvProblem p_;
  std::int64_t oh_, ow_, quads_;
  std::size_t tile_;  // in kTiles
  int k_blocks_;
  std::int64_t groups_, tiles_, hp_, wp_;
  std::uint8_t input_zero_point_;
  std::vector<std::int8_t> weight_;
  std::vector<std::int32_t> compensation_;  // zp * sum of each output channel's weights
  Requantization requantize_;
  std::string explanation_;  // the tile's measurement, when plan measured
};

}  // namespace

std::string int8_direct_vnni_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return "groups must be 1 (depthwise and grouped int8 are other kernels)";
  return {};
}

namespace {
void check_int8_direct_vnni(const ConvProblem& p, const Int8ConvWeights& w) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_direct_vnni_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.23_int8_direct_vnni cannot run {}: {}", to_string(p), why));
}
}  // namespace

// Plans p with each of tile_choices and keeps the fastest (fastest_variant.hpp). The choice changes
// the speed only: each output is the same exact integer sum whatever the tile.
std::unique_ptr<PlannedInt8Conv> int8_direct_vnni_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  check_int8_direct_vnni(p, w);
  const std::vector<VnniTile> choices = tile_choices(p);
  const int threads = omp_get_max_threads();
  if (!worth_measuring(choices.size(), p, threads)) return std::make_unique<Int8VnniConv>(p, w, e, choices[0]);
  return plan_fastest_variant(
      p, choices, threads, fmt::format("cpu.23 register tile {} {}", to_string(p), to_string(e.activation)),
      [&](const ConvProblem& q, VnniTile t) { return std::make_unique<Int8VnniConv>(q, w, e, t); },
      tile_name);
}

std::vector<VnniTile> int8_direct_vnni_tiles() { return {kTiles.begin(), kTiles.end()}; }

std::unique_ptr<PlannedInt8Conv> int8_direct_vnni_plan_as(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e,
                                                          VnniTile tile) {
  check_int8_direct_vnni(p, w);
  return std::make_unique<Int8VnniConv>(p, w, e, tile);
}

}  // namespace convlab::cpu
