// cpu.05_depthwise_xsimd: depthwise convolution (groups == C == K) on a channel-blocked layout.
//
// What changes against cpu.02_direct_xsimd: a depthwise tap reads only its own channel, so there
// is no broadcast and no reduction over channels: a vector holds `block` channels of one pixel
// (NCHWc, as cpu.02) and per tap one weight vector is FMA'd with the input vector of each of the
// tile's pixels (part of a row, or of the whole plane when rows are short; up to 16 pixels with
// AVX-512 or NEON, 6 with AVX2).
// Packing, the padded reorder and the NCHW epilogue are cpu.02's (layout.hpp, microkernel.hpp).
// Why faster (than vectors along the output width): every lane does useful work whatever the
// map's size, no scalar border path, no gathers for strides; independent FMA chains cover the
// latency and the tile's loads are aligned vectors from L1.
// Bound: memory and latency, never FMA: each input vector feeds at most R*S FMAs of different
// outputs, each FMA needs its own load, and the reorder (30-60% of a batch-32 run) and the
// transposed stores touch every value once more. Expect a small fraction of the FMA peak.
// Measured: 26 GFLOP/s, 13% of the FMA peak, 1.22x oneDNN on g64mb32ic64ih56oc64oh56kh3ph1, its input
//   reorder 0.9 ms of 4.5 (2-core Zen 3 VM, AVX2, interleaved, 2026-11-30); AVX-512: 1.15-1.9x oneDNN
//   on mobilenet-tiny's depthwise layers at batch 32, 1.5-2.0x at batch 1 (Ice Lake VM). AVX2 8x8
//   transposes, then whole-plane tiles, on g128mb32ic128ih8: 0.50x -> 0.58-0.61x -> 0.68-0.71x oneDNN.
//   Batch 1, 7 x 7 planes copied by channel blocks as the items: g960 1.42x -> 2.73x oneDNN (Zen 5).
// More (tile widths, output prefetch, the history): docs/kernel-notes.md#cpu05_depthwise_xsimd
// Run: build/convlab conv --problem g64mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.05_depthwise_xsimd,onednn.conv --interleave
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab::cpu {

namespace {

// kTile output pixels for one block of channels, pixel x's taps starting at in + offset(x): one
// accumulator vector per pixel; per tap, one weight vector shared by the tile's FMAs, each with
// its own pixel's input vector (an aligned load: no broadcast, no gather, whatever the stride).
// Summed in the order (i, j), bias added last. The pixels are consecutive in each NCHW channel
// plane: part of a row, or (whole-plane tiles) running on into the next rows. g.channels is
// unused: a depthwise tap reads only its own channel. k3x3: the kernel is 3 x 3, the tap loops
// unrolled (as cpu.02's, microkernel.hpp).
template <int kTile, bool k3x3, class PixelOffset>
void depthwise_tile(const float* in, PixelOffset offset, const float* w, const float* bias, const TileGeometry& g,
                    Activation act, float* out, std::int64_t out_channel_stride, std::int64_t c_valid) {
  const std::int64_t r = k3x3 ? 3 : g.r, s = k3x3 ? 3 : g.s;
  Vec acc[kTile];
  for (Vec& a : acc) a = Vec(0.0f);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < s; ++j, w += kBlock) {
      const float* ip = in + i * g.in_tap_row + j * g.in_tap_col;
      const Vec wv = Vec::load_aligned(w);
      for (int x = 0; x < kTile; ++x) acc[x] = xsimd::fma(Vec::load_aligned(ip + offset(x)), wv, acc[x]);
    }
  store_tile_nchw(acc, Vec::load_aligned(bias), act, out, out_channel_stride, c_valid);
}

// Part of one output row, pixels g.in_pixel apart (a compile-time block at unit stride).
template <int kTile, bool kUnitStride, bool k3x3>
void row_tile(const float* in, const float* w, const float* bias, const TileGeometry& g, Activation act, float* out,
              std::int64_t out_channel_stride, std::int64_t c_valid) {
  const std::int64_t pixel = kUnitStride ? kBlock : g.in_pixel;
  depthwise_tile<kTile, k3x3>(in, [=](int x) { return x * pixel; }, w, bias, g, act, out, out_channel_stride,
                              c_valid);
}

// Pixels anywhere in the plane, their offsets from a table the compiler keeps in registers.
template <int kTile, bool k3x3>
void plane_tile(const float* in, const std::int64_t* offsets, const float* w, const float* bias,
                const TileGeometry& g, Activation act, float* out, std::int64_t out_channel_stride,
                std::int64_t c_valid) {
  std::int64_t off[kTile];
  std::copy_n(offsets, kTile, off);
  depthwise_tile<kTile, k3x3>(in, [&off](int x) { return off[x]; }, w, bias, g, act, out, out_channel_stride,
                              c_valid);
}

// Up to 16 pixels with 32 registers (AVX-512, NEON): 16 accumulators + a weight vector fit, and a
// 16-pixel row (16x16 maps) is then one tile, so one register transpose in the epilogue, not two
// half-empty ones (the shuffles weigh: a depthwise tile has only R*S FMAs per output vector).
constexpr int kMaxDepthwiseTile = kVectorRegisters == 32 ? 16 : kMaxTile;
// Rows too short for full tiles (8x8 maps: two tiles of 4 with AVX2) take whole-plane tiles, as
// cpu.02's do (rows_too_short), in items of a few tiles.
constexpr std::int64_t kPlaneChunk = 4 * kMaxDepthwiseTile;

template <class Fn, std::size_t... kW>
constexpr auto tiles_by_width(Fn make, std::index_sequence<kW...>) {
  return std::array{make.template operator()<static_cast<int>(kW) + 1>()...};
}
constexpr auto kWidths = std::make_index_sequence<kMaxDepthwiseTile>();
// kRowTiles[3 x 3][unit stride][width - 1], kPlaneTiles[3 x 3][width - 1].
template <bool k3x3>
constexpr std::array row_tiles = {tiles_by_width([]<int kW>() { return &row_tile<kW, false, k3x3>; }, kWidths),
                                  tiles_by_width([]<int kW>() { return &row_tile<kW, true, k3x3>; }, kWidths)};
constexpr std::array kRowTiles = {row_tiles<false>, row_tiles<true>};
constexpr std::array kPlaneTiles = {tiles_by_width([]<int kW>() { return &plane_tile<kW, false>; }, kWidths),
                                    tiles_by_width([]<int kW>() { return &plane_tile<kW, true>; }, kWidths)};

class DepthwiseConv final : public PlannedConv {
 public:
  DepthwiseConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads)
      : p_(p),
        epilogue_(e),
        threads_(threads),
        by_image_(shares_whole_images(p.n, threads)),
        image_(padded_input_image(p, kBlock)),
        geometry_(tile_geometry(p, image_, 1, p.r * p.s * kBlock)),
        c_blocks_(image_.channel_blocks()),
        plane_(rows_too_short(p.out_w(), kMaxDepthwiseTile)),
        chunks_(p.out_h() * p.out_w(), kPlaneChunk),
        shared_copy_(plane_ ? SharedCopy::by_channel_blocks : SharedCopy::by_rows),
        plane_offsets_(plane_ ? plane_offset_table(p, image_, geometry_.in_pixel) : std::vector<std::int64_t>()),
        prefetch_output_(prefetch_output_pays(p)),
        three_by_three_(p.r == 3 && p.s == 3),
        weight_(pack_blocked_weights(w.weight, p.c, kBlock)),  // [C/block][R][S][block]
        bias_(pack_blocked_bias(w.bias, p.c, kBlock)) {}

  std::size_t workspace_bytes() const override {
    return blocked_copies_bytes(image_, by_image_, threads_, 1, shared_copy_);
  }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(c_blocks_ * (p_.r * p_.s + 1) * kBlock) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    // An item is one output row of one channel block, rows outermost, or one chunk of the plane,
    // channel blocks outermost: at batch 1 a thread then convolves the rows or the channels it
    // reordered (planes of 7 x 7 had been one chunk, each thread reading half its channels from
    // the other's copy: mobilenet-v2's features.15.conv.1 1.2-1.4x -> 2.2-2.5x oneDNN, Zen 5).
    for_each_blocked_image(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_,
                           (plane_ ? chunks_.parts : p_.out_h()) * c_blocks_,
                           [&](std::int64_t n, const float* copy, std::int64_t item, int) {
                             if (plane_) convolve_chunk(copy, output, n, item % chunks_.parts, item / chunks_.parts);
                             else convolve_row(copy, output, n, item / c_blocks_, item % c_blocks_);
                           },
                           1, shared_copy_);
  }

  // The input reorder alone; the output's transpose back to NCHW is fused into the tile's epilogue.
  bool changes_layout() const override { return true; }
  void run_layout_changes_only(const float* input, float*, void* workspace) const override {
    reorder_blocked_images(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_, 1, shared_copy_);
  }

 private:
  // Output row y of channel block cb.
  void convolve_row(const float* blocked, float* output, std::int64_t n, std::int64_t y, std::int64_t cb) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
    const float* in = blocked + cb * geometry_.in_block_stride + y * p_.stride_h * image_.row_stride();
    float* out = output + ((n * p_.c + cb * kBlock) * oh + y) * ow;
    if (prefetch_output_ && y + 1 < oh)  // the next row of these channels, as cpu.02 does
      prefetch_output_row(out + ow, std::min(kBlock, p_.c - cb * kBlock), oh * ow, ow);
    const auto& tiles = kRowTiles[three_by_three_][p_.stride_w == 1 ? 1 : 0];
    for_each_tile(ow, [&](std::int64_t x0, int width) {
      tiles[width - 1](in + x0 * geometry_.in_pixel, weight_.get() + cb * geometry_.w_block_stride,
                       bias_.get() + cb * kBlock, geometry_, epilogue_.activation, out + x0, oh * ow,
                       p_.c - cb * kBlock);
    }, kMaxDepthwiseTile);
  }

  // Chunk `chunk` of the output plane of channel block cb, read as one long row.
  void convolve_chunk(const float* blocked, float* output, std::int64_t n, std::int64_t chunk, std::int64_t cb) const {
    const std::int64_t plane = p_.out_h() * p_.out_w(), first = chunks_.begin(chunk);
    const float* in = blocked + cb * geometry_.in_block_stride;
    float* out = output + (n * p_.c + cb * kBlock) * plane + first;
    for_each_tile(chunks_.size(chunk), [&](std::int64_t x0, int width) {
      kPlaneTiles[three_by_three_][width - 1](in, plane_offsets_.data() + first + x0, weight_.get() + cb * geometry_.w_block_stride,
                             bias_.get() + cb * kBlock, geometry_, epilogue_.activation, out + x0, plane,
                             p_.c - cb * kBlock);
    }, kMaxDepthwiseTile);
  }

  ConvProblem p_;
  Epilogue epilogue_;
  int threads_;
  bool by_image_;  // whole images per thread (see shares_whole_images)
  PaddedBlockedImage image_;
  TileGeometry geometry_;
  std::int64_t c_blocks_;
  bool plane_;            // whole-plane tiles (rows_too_short), in chunks_ of the output plane
  EvenSplit chunks_;
  SharedCopy shared_copy_;  // at batch 1: by channel blocks on planes (their items' order), else rows
  std::vector<std::int64_t> plane_offsets_;  // plane_offset_table, when plane_
  bool prefetch_output_;  // as cpu.02 (prefetch_output_pays)
  bool three_by_three_;   // the tiles with unrolled 3 x 3 tap loops
  std::unique_ptr<float[], detail::AlignedFree> weight_, bias_;  // bias_: [C/block][block]
};

}  // namespace

std::string depthwise_xsimd_unsupported(const ConvProblem& p) {
  if (!p.is_depthwise())
    return fmt::format("depthwise only: needs groups == ic == oc (channel multiplier 1), got g{} ic{} oc{}",
                       p.groups, p.c, p.k);
  return {};
}

std::unique_ptr<PlannedConv> depthwise_xsimd_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  if (std::string why = depthwise_xsimd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.05_depthwise_xsimd does not support {}: {}", to_string(p), why));
  check_weights(p, w);
  return std::make_unique<DepthwiseConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
