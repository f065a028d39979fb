// The broadcast-FMA register tile shared by the SIMD kernels (cpu.02's convolution, the
// Winograd kernels' GEMMs over channels), so the idea lives in one place.
//
// A tile keeps kKBlocks x kTile vectors of accumulators in registers: kKBlocks blocks of `block`
// output channels (block = the SIMD width in floats) for kTile output pixels (or Winograd tiles).
// Per input channel and kernel tap it loads kKBlocks weight vectors and, per pixel, broadcasts one
// input value and does kKBlocks FMAs: enough independent FMAs to cover their 4-cycle latency on
// two pipes, and at most one load per FMA.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "kernels/common/kernel.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/tile_loop.hpp"

namespace convlab::cpu {

using Vec = xsimd::batch<float>;
constexpr std::int64_t kBlock = Vec::size;
// The vector registers the tile may fill: 32 with AVX-512 and on 64-bit ARM (NEON), 16 with AVX2
// and SSE. The width of a register (16, 8 or 4 floats) sets the block, not the tile.
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int kVectorRegisters = 32;
#else
constexpr int kVectorRegisters = 16;
#endif
// Accumulators per tile, k blocks x pixels, with the weight vectors and a broadcast about the
// register file: 16 registers give 2 x 6 + 3; 32 give 4 x 7 + 5, one over: the compiler keeps one
// accumulator in L1, which measured cheaper than a 4 x 6 tile (AVX-512; the same rule on NEON).
constexpr int kMaxAccumulators = kVectorRegisters == 32 ? 28 : 12;
constexpr int kMaxKBlocks = kVectorRegisters == 32 ? 4 : 2;
constexpr int kMaxTile = kVectorRegisters == 32 ? 14 : 6;  // the widest tile, for 1 or 2 k blocks
// Makes the compiler hold v in a register from here: without it GCC folds a vector's load into
// every FMA that uses it (vfmadd231ps with a memory operand), one load per use instead of one,
// which makes a tile that reuses each loaded vector several times load-bound (cpu.08).
inline void keep_in_register(Vec& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+v"(v.data));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(v.data));
#else
  (void)v;
#endif
}

// The widest tile for `k_blocks` blocks of output channels: AVX-512 1 or 2 x 14, 3 x 9, 4 x 7.
// The more k blocks, the fewer loads per FMA (4 x 7: 4 weight vectors + 7 broadcasts per 28
// FMAs; 2 x 14: 2 + 14), and loads are what keeps a tile from the FMA peak (convlab peak).
constexpr int max_tile_width(std::int64_t k_blocks) {
  return std::min<int>(kMaxTile, kMaxAccumulators / static_cast<int>(k_blocks));
}

// `count` split into the fewest near-equal parts of at most `max_part` (56 -> 8 x 7, 32 pixels
// by 14 -> 11 + 11 + 10; 4 k blocks by 4 -> 4): no thin tail part, which would have too few
// accumulators to hide the FMA latency.
struct EvenSplit {
  std::int64_t count, parts;
  EvenSplit(std::int64_t n, std::int64_t max_part) : count(n), parts((n + max_part - 1) / max_part) {}
  std::int64_t begin(std::int64_t i) const { return i * (count / parts) + std::min(i, count % parts); }
  int size(std::int64_t i) const { return static_cast<int>(count / parts + (i < count % parts ? 1 : 0)); }
};

// Strides (in floats) and loop bounds of one tile's reduction.
struct TileGeometry {
  std::int64_t channels, r, s;
  std::int64_t in_block_stride;  // between channel blocks of the input (NCHWc)
  std::int64_t in_tap_row;       // one kernel row further
  std::int64_t in_tap_col;       // one kernel column further
  std::int64_t in_pixel;         // one output pixel further
  std::int64_t w_block_stride;   // between output-channel blocks of the packed weights
  std::int64_t in_channel = 1;   // between the channels of a block, when accumulate_at's kNchw: H*W
};

// A tile's strides over `image`, a padded NCHWc copy of p's input (padded_input_image).
inline TileGeometry tile_geometry(const ConvProblem& p, const PaddedBlockedImage& image, std::int64_t channels,
                                  std::int64_t w_block_stride) {
  return {.channels = channels,
          .r = p.r,
          .s = p.s,
          .in_block_stride = image.block_stride(),
          .in_tap_row = p.dilation_h * image.row_stride(),
          .in_tap_col = p.dilation_w * image.block,
          .in_pixel = p.stride_w * image.block,
          .w_block_stride = w_block_stride};
}

// acc[kb][x] = sum over c, r, s of in(x; c, r, s) * w[kb](c, r, s), weights packed as
// [K/block][C][R][S][block], pixel x's taps starting at in + offset(x) (floats). Summed in the
// fixed order c, r, s. The offsets are loop-invariant: compile-time constants (unit stride: the
// broadcasts use immediate address offsets), a multiple of a stride, or a table whose entries
// stay in registers (pixels from several output rows, cpu.02's whole-plane tiles).
// kSide > 0: the kernel is kSide x kSide (g.r and g.s ignored), so the tap loops unroll. 3: nine
// taps of straight FMAs per channel instead of a 3-trip inner loop whose branch and pointer updates
// came with every 12 FMAs (AVX2). Measured on cpu.02, Zen 2: the stride-2 3 x 3 layers 0.87-0.91x
// -> 1.03x oneDNN, mb32ic64ih8oc64oh8kh3ph1 0.87x -> 0.93x (bench/RESULTS.md, fifteenth session).
// 1 (the Winograd GEMMs, cpu.02's 1 x 1 layers): with run-time 1 x 1 tap loops, their setup cost
// as many instructions per channel as the 4 x 7 tile's 28 FMAs.
// With 16 registers (AVX2), GCC 12 kept the 2 x 6 tile's weight vectors in registers for one tap
// in three and folded them into the FMAs for the others (vfmadd231ps mem: six loads of each), 1.2
// loads per FMA where the tile needs 0.67; keep_in_register on each loaded vector stops that
// (on a local: on the array element, GCC kept the whole tile in memory). cpu.02 on resnet18's 3 x 3
// layers, Zen 3: 0.92x -> 1.09x oneDNN. With 32 registers GCC folds nothing; its code is unchanged.
// kNchw: the input is NCHW, its channels g.in_channel floats apart (in NCHWc: one, a constant).
template <int kTile, int kKBlocks, int kSide = 0, bool kNchw = false, class PixelOffset>
inline void accumulate_at(Vec (&acc)[kKBlocks][kTile], const float* in, const float* w, const TileGeometry& g,
                          PixelOffset offset) {
  const std::int64_t r = kSide > 0 ? kSide : g.r, s = kSide > 0 ? kSide : g.s;
  CONVLAB_TILE_LOOP_GCC_TOO
  for (auto& row : acc) {
    CONVLAB_TILE_LOOP_GCC_TOO
    for (Vec& a : row) a = Vec(0.0f);
  }
  // Channel blocks, then the channels of a block one float apart: an input pointer that steps by
  // one float, where c / kBlock and c % kBlock per channel cost five instructions per channel
  // (a 1 x 1 tile's 24 FMAs came with 20 other instructions).
  for (std::int64_t c0 = 0; c0 < g.channels; c0 += kBlock) {
    const float* in_c = in + (c0 / kBlock) * g.in_block_stride;
    const std::int64_t step = kNchw ? g.in_channel : 1;
    const float* const block_end = in_c + std::min<std::int64_t>(kBlock, g.channels - c0) * step;
    for (; in_c != block_end; in_c += step) {
      for (std::int64_t i = 0; i < r; ++i) {
        for (std::int64_t j = 0; j < s; ++j, w += kBlock) {
          const float* ip = in_c + i * g.in_tap_row + j * g.in_tap_col;
          Vec wv[kKBlocks];
          CONVLAB_TILE_LOOP
          for (int kb = 0; kb < kKBlocks; ++kb) {
            Vec loaded = Vec::load_aligned(w + kb * g.w_block_stride);
            if constexpr (kVectorRegisters == 16) keep_in_register(loaded);  // why: above
            wv[kb] = loaded;
          }
          CONVLAB_TILE_LOOP
          for (int x = 0; x < kTile; ++x) {
            const Vec v(ip[offset(x)]);
            CONVLAB_TILE_LOOP
            for (int kb = 0; kb < kKBlocks; ++kb) acc[kb][x] = xsimd::fma(v, wv[kb], acc[kb][x]);
          }
        }
      }
    }
  }
}

// accumulate_at for kTile neighbouring pixels of one output row, g.in_pixel apart: kStride blocks,
// a constant (the broadcasts' address offsets then are immediates), or 0: g.in_pixel at run time,
// each pixel's offset in a register of its own (14 of them: GCC reloads some from the stack).
template <int kTile, int kKBlocks, int kStride, int kSide = 0>
inline void accumulate(Vec (&acc)[kKBlocks][kTile], const float* in, const float* w, const TileGeometry& g) {
  const std::int64_t pixel = kStride > 0 ? kStride * kBlock : g.in_pixel;
  accumulate_at<kTile, kKBlocks, kSide>(acc, in, w, g, [=](int x) { return x * pixel; });
}

// Every (width, k blocks) instantiation of a tile function, indexed [k blocks - 1][width - 1]
// (null past max_tile_width(k blocks)): make.template operator()<width, k blocks>() returns the
// function pointer.
template <class Make>
constexpr auto tile_table(Make make) {
  using Fn = decltype(make.template operator()<1, 1>());
  const auto entry = [&]<int kW, int kKB>() -> Fn {
    if constexpr (kW <= max_tile_width(kKB)) return make.template operator()<kW, kKB>();
    return nullptr;
  };
  const auto row = [&]<int kKB, std::size_t... kW>(std::index_sequence<kW...>) {
    return std::array<Fn, kMaxTile>{entry.template operator()<static_cast<int>(kW) + 1, kKB>()...};
  };
  return [&]<std::size_t... kKB>(std::index_sequence<kKB...>) {
    return std::array{row.template operator()<static_cast<int>(kKB) + 1>(std::make_index_sequence<kMaxTile>())...};
  }(std::make_index_sequence<kMaxKBlocks>());
}

// Whether output rows of `width` pixels are too short for tiles of `widest`: split into tiles of
// at most that, a row then averages under 3/4 of it (8 pixels: two tiles of 4 where 6 or 7 fit).
// cpu.02 and cpu.05 then run their tiles over the whole output plane, several rows to a tile:
// measured on 8 x 8 layers in bench/RESULTS.md (2026-12-01).
inline bool rows_too_short(std::int64_t width, std::int64_t widest) {
  return 4 * width < 3 * widest * EvenSplit(width, widest).parts;
}

// The whole-plane tiles' table, made once in plan: for each pixel of a p.out_h() x p.out_w()
// output plane, read as one long row, the offset (floats) of its first tap in the padded input
// `image` (output rows p.stride_h input rows apart, pixels `pixel_step` floats).
inline std::vector<std::int64_t> plane_offset_table(const ConvProblem& p, const PaddedBlockedImage& image,
                                                    std::int64_t pixel_step) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(p.out_h() * p.out_w()));
  for (std::int64_t i = 0; i < p.out_h() * p.out_w(); ++i)
    offsets[i] = i / p.out_w() * p.stride_h * image.row_stride() + i % p.out_w() * pixel_step;
  return offsets;
}

// Splits `count` pixels into tiles of equal width (EvenSplit): fn(first pixel, width).
template <class Fn>
inline void for_each_tile(std::int64_t count, Fn&& fn, int max_tile = kMaxTile) {
  const EvenSplit split(count, max_tile);
  for (std::int64_t t = 0; t < split.parts; ++t) fn(split.begin(t), split.size(t));
}

// Whether prefetch_output_row pays for a problem: when one image's output is over 256 KiB.
// Smaller ones stay in a core's L2 (1-2 MiB on current x86) from one run to the next, or their
// rows are too short for the lines to arrive in time, and the prefetches only cost: measured on
// cpu.02 and cpu.05 in bench/RESULTS.md (2026-11-30), from 0.46-0.74x the time (a 64-channel 56 x 56
// depthwise layer) to 1.05x (small ones).
inline bool prefetch_output_pays(const ConvProblem& p) {
  return p.k * p.out_h() * p.out_w() * static_cast<std::int64_t>(sizeof(float)) > (256 << 10);
}

// Asks for the lines of an output row that a row of tiles will write, with intent to write
// (PREFETCHW where the ISA has it); callers ask one row ahead. Each tile's epilogue writes a few
// pixels into each of its `channels` NCHW planes: without this, the first write to each line
// waits for a read-for-ownership miss, and a tile's 64 such stores fill the store buffer and
// stall the FMAs.
[[gnu::always_inline]] inline void prefetch_output_row(const float* row, std::int64_t channels,
                                                       std::int64_t channel_stride, std::int64_t width) {
  prefetch_lines<true>(row, channels, channel_stride, width);
}

// activate() on a vector, with the same comparisons, so NaN passes through as it does there
// (select, not max/min: max_ps returns its second operand for NaN, and GCC 12 warns about the
// undefined operand inside _mm512_max_ps).
inline Vec activate_vec(Activation a, Vec v) {
  if (a == Activation::none) return v;
  const Vec zero(0.0f), six(6.0f);
  v = xsimd::select(v < zero, zero, v);
  return a == Activation::relu6 ? xsimd::select(v > six, six, v) : v;
}

// n floats of `from` to `to` (apart), with no library call: in cpu.06 a memmove call per run of a
// 7 x 7 plane or per channel of a packed panel cost as much as the copy (5% of its time at batch 1).
// Whole vectors, the last overlapping the one before; shorter runs in two overlapping pieces.
inline void copy_floats(const float* from, std::int64_t n, float* to) {
  if (n >= kBlock) {
    for (std::int64_t i = 0; i + kBlock <= n; i += kBlock) Vec::load_unaligned(from + i).store_unaligned(to + i);
    if (n % kBlock != 0) Vec::load_unaligned(from + n - kBlock).store_unaligned(to + n - kBlock);
  } else if (n >= 8) {
    std::memcpy(to, from, 8 * sizeof(float));
    std::memcpy(to + n - 8, from + n - 8, 8 * sizeof(float));
  } else if (n >= 4) {
    std::memcpy(to, from, 4 * sizeof(float));
    std::memcpy(to + n - 4, from + n - 4, 4 * sizeof(float));
  } else {
    if (n > 0) to[0] = from[0];
    if (n > 1) to[1] = from[1];
    if (n > 2) to[2] = from[2];
  }
}

// Lanes [0, n) of a vector from in[0, n), the others zero; nothing past in[n - 1] is read (n <=
// the width). Masked loads on x86 (fast on AMD too, unlike masked stores).
inline Vec load_first(const float* in, std::int64_t n) {
#if defined(__AVX512F__)
  if constexpr (kBlock == 16) return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), in);
#endif
#if defined(__AVX2__) && !defined(__AVX512F__)
  if constexpr (kBlock == 8)
    return _mm256_maskload_ps(in, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
#endif
  alignas(64) float lanes[kBlock] = {};
  std::copy_n(in, n, lanes);
  return Vec::load_aligned(lanes);
}

// load_first's mirror: lanes [0, n) of v to out[0, n), nothing else written (a row's partial last
// vector). AVX-512 masks the store (fast there, unlike AVX2's maskmov on AMD); elsewhere the lanes
// go through a buffer, copied with no library call: in cpu.08's epilogue std::copy_n was one, and
// GCC kept the whole tile around it on the stack.
inline void store_first(float* out, Vec v, std::int64_t n) {
#if defined(__AVX512F__)
  if constexpr (kBlock == 16) {
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << n) - 1), v);
    return;
  }
#endif
  alignas(64) float lanes[kBlock];
  v.store_aligned(lanes);
  for (std::int64_t l = 0; l < n; ++l) out[l] = lanes[l];
}

#if defined(__AVX2__)
// Stores the first kCount floats of v: whole 4- and 2-float pieces, no masked store (AMD's is
// microcoded and slow), nothing past out[kCount - 1].
template <int kCount>
inline void store_first(float* out, __m256 v) {
  if constexpr (kCount == 8) {
    _mm256_storeu_ps(out, v);
  } else {
    __m128 part = _mm256_castps256_ps128(v);
    if constexpr (kCount >= 4) {
      _mm_storeu_ps(out, part);
      part = _mm256_extractf128_ps(v, 1);
      out += 4;
    }
    constexpr int kRest = kCount % 4;
    if constexpr (kRest >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(out), part);
      part = _mm_movehl_ps(part, part);
      out += 2;
    }
    if constexpr (kRest % 2 == 1) _mm_store_ss(out, part);
  }
}
#endif

// A tile's epilogue for one block of `block` channels x kTile pixels of one output row: bias and
// activation on the vectors, then into NCHW through a transpose (no blocked output buffer, no
// second pass). With AVX-512 in registers, one masked store per channel; with AVX2 likewise (8 x 8,
// a store or two per channel); otherwise through L1, one scalar copy per output. `channels`: how
// many of the block's channels are real (the rest, zero-weight padding, are computed but never
// stored).
template <int kTile>
CONVLAB_TILE_INLINE inline void store_tile_nchw(const Vec (&acc)[kTile], Vec bias, Activation act, float* out,
                            std::int64_t channel_stride, std::int64_t channels) {
  channels = std::min(channels, kBlock);
#if defined(__AVX512F__)
  if constexpr (kBlock == 16) {
    __m512 r[16];
    CONVLAB_TILE_LOOP
    for (int x = 0; x < kTile; ++x) r[x] = activate_vec(act, acc[x] + bias);
    for (int x = kTile; x < 16; ++x) r[x] = _mm512_setzero_ps();
    transpose_16x16(r);
    for (std::int64_t c = 0; c < channels; ++c)
      _mm512_mask_storeu_ps(out + c * channel_stride, static_cast<__mmask16>((1u << kTile) - 1), r[c]);
    return;
  }
#endif
#if defined(__AVX2__) && !defined(__AVX512F__)
  if constexpr (kBlock == 8) {  // the same in 8 x 8 with AVX2: one or two stores per channel
    __m256 r[8];
    CONVLAB_TILE_LOOP
    for (int x = 0; x < kTile; ++x) r[x] = activate_vec(act, acc[x] + bias);
    for (int x = kTile; x < 8; ++x) r[x] = _mm256_setzero_ps();
    transpose_8x8(r);
    for (std::int64_t c = 0; c < channels; ++c) store_first<kTile>(out + c * channel_stride, r[c]);
    return;
  }
#endif
  alignas(64) float pixels[kTile][kBlock];
  CONVLAB_TILE_LOOP
  for (int x = 0; x < kTile; ++x) activate_vec(act, acc[x] + bias).store_aligned(pixels[x]);
  for (std::int64_t c = 0; c < channels; ++c) {
    float* o = out + c * channel_stride;
    for (int x = 0; x < kTile; ++x) o[x] = pixels[x][c];
  }
}

}  // namespace convlab::cpu
