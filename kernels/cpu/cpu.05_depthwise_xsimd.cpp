// cpu.05_depthwise_xsimd: depthwise convolution (groups == C == K) on a channel-blocked layout.
//
// What changes against cpu.02_direct_xsimd: a depthwise tap reads only its own channel, so there
// is no broadcast and no reduction over channels: a vector holds `block` channels of one pixel
// (NCHWc, as cpu.02) and per tap one weight vector is FMA'd with the input vector of each of the
// tile's pixels (a row, or short rows stacked; up to 16 with AVX-512 or NEON, 6 with AVX2).
// Packing, the padded reorder and the NCHW epilogue are cpu.02's (layout.hpp, microkernel.hpp).
// Why faster (than vectors along the output width): every lane does useful work whatever the
// map's size, no scalar border path, no gathers for strides; independent FMA chains cover the
// latency and the tile's loads are aligned vectors from L1.
// Bound: memory and latency, never FMA: each input vector feeds at most R*S FMAs of different
// outputs, each FMA needs its own load, and the reorder (30-60% of a batch-32 run) and the
// transposed stores touch every value once more. Expect a small fraction of the FMA peak.
// Measured: 26 GFLOP/s, 13% of the FMA peak, 1.22x oneDNN on g64mb32ic64ih56oc64oh56kh3ph1, its input
//   reorder 0.9 ms of 4.5 (2-core Zen 3 VM, AVX2, interleaved, 2026-11-30); AVX-512: 1.15-1.9x oneDNN
//   on mobilenet-tiny's depthwise layers at batch 32, 1.5-2.0x at batch 1 (Ice Lake VM).
// More (tile widths, output prefetch, the history): docs/kernel-notes.md#cpu05_depthwise_xsimd
// Run: build/convlab conv --problem g64mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.05_depthwise_xsimd,onednn.conv --interleave
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab::cpu {

namespace {

// kRows x kCols output pixels (kCols of each of kRows consecutive rows, in_row_step floats apart
// in the input) for one block of channels: one accumulator vector per pixel; per tap, one weight
// vector shared by the tile's FMAs, each with its own pixel's input vector (an aligned load: no
// broadcast, no gather, whatever the stride). Summed in the order (i, j), bias added last.
// Several rows only when kCols is a whole output row, so the tile's outputs are contiguous in each
// NCHW channel plane. g.channels is unused: a depthwise tap reads only its own channel.
template <int kCols, int kRows, bool kUnitStride>
void depthwise_tile(const float* in, std::int64_t in_row_step, const float* w, const float* bias,
                    const TileGeometry& g, Activation act, float* out, std::int64_t out_channel_stride,
                    std::int64_t c_valid) {
  constexpr int kTile = kCols * kRows;
  const std::int64_t pixel = kUnitStride ? kBlock : g.in_pixel;
  Vec acc[kTile];
  for (Vec& a : acc) a = Vec(0.0f);
  for (std::int64_t i = 0; i < g.r; ++i)
    for (std::int64_t j = 0; j < g.s; ++j, w += kBlock) {
      const float* ip = in + i * g.in_tap_row + j * g.in_tap_col;
      const Vec wv = Vec::load_aligned(w);
      for (int x = 0; x < kTile; ++x)
        acc[x] = xsimd::fma(Vec::load_aligned(ip + (x / kCols) * in_row_step + (x % kCols) * pixel), wv, acc[x]);
    }
  store_tile_nchw(acc, Vec::load_aligned(bias), act, out, out_channel_stride, c_valid);
}

// Up to 16 pixels with 32 registers (AVX-512, NEON): 16 accumulators + a weight vector fit, and a
// 16-pixel row (16x16 maps) is then one tile, so one register transpose in the epilogue, not two
// half-empty ones (the shuffles weigh: a depthwise tile has only R*S FMAs per output vector).
// Rows of at most half that (8x8 maps) are stacked kMaxDepthwiseTile / width to a tile, for the
// same reason.
constexpr int kMaxDepthwiseTile = kVectorRegisters == 32 ? 16 : kMaxTile;
constexpr int kMaxStackedWidth = kMaxDepthwiseTile / 2;
using TileFn = void (*)(const float*, std::int64_t, const float*, const float*, const TileGeometry&, Activation,
                        float*, std::int64_t, std::int64_t);

// kTiles[unit stride][width - 1]: one row. kStackedTiles[unit stride][width - 1]: whole rows of
// `width` pixels, as many as fit.
template <bool kUnitStride, int kCount, bool kStacked>
constexpr auto depthwise_tiles() {
  return []<std::size_t... kW>(std::index_sequence<kW...>) {
    return std::array<TileFn, kCount>{
        &depthwise_tile<kW + 1, kStacked ? kMaxDepthwiseTile / (kW + 1) : 1, kUnitStride>...};
  }(std::make_index_sequence<kCount>());
}
constexpr std::array kTiles = {depthwise_tiles<false, kMaxDepthwiseTile, false>(),
                               depthwise_tiles<true, kMaxDepthwiseTile, false>()};
constexpr std::array kStackedTiles = {depthwise_tiles<false, kMaxStackedWidth, true>(),
                                      depthwise_tiles<true, kMaxStackedWidth, true>()};

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
        rows_per_item_(p.out_w() <= kMaxStackedWidth ? kMaxDepthwiseTile / p.out_w() : 1),
        prefetch_output_(prefetch_output_pays(p)),
        weight_(pack_blocked_weights(w.weight, p.c, kBlock)),  // [C/block][R][S][block]
        bias_(pack_blocked_bias(w.bias, p.c, kBlock)) {}

  std::size_t workspace_bytes() const override { return blocked_copies_bytes(image_, by_image_, threads_); }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(c_blocks_ * (p_.r * p_.s + 1) * kBlock) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    // An item is rows_per_item_ output rows of one channel block, rows outermost: at batch 1 a
    // thread then convolves the rows it reordered.
    const std::int64_t row_groups = (p_.out_h() + rows_per_item_ - 1) / rows_per_item_;
    for_each_blocked_image(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_,
                           row_groups * c_blocks_, [&](std::int64_t n, const float* copy, std::int64_t item, int) {
                             convolve_rows(copy, output, n, item / c_blocks_ * rows_per_item_, item % c_blocks_);
                           });
  }

  // The input reorder alone; the output's transpose back to NCHW is fused into the tile's epilogue.
  bool changes_layout() const override { return true; }
  void run_layout_changes_only(const float* input, float*, void* workspace) const override {
    reorder_blocked_images(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_);
  }

 private:
  // Output rows [y0, y0 + rows_per_item_) of channel block cb: one stacked tile when they are all
  // there, else row by row.
  void convolve_rows(const float* blocked, float* output, std::int64_t n, std::int64_t y0, std::int64_t cb) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w(), row_step = p_.stride_h * image_.row_stride();
    const float* in = blocked + cb * geometry_.in_block_stride + y0 * row_step;
    const float* w = weight_.get() + cb * geometry_.w_block_stride;
    const float* bias = bias_.get() + cb * kBlock;
    float* out = output + ((n * p_.c + cb * kBlock) * oh + y0) * ow;
    const int unit = p_.stride_w == 1 ? 1 : 0;
    if (prefetch_output_)  // the next item's rows of these channels, as cpu.02 does one row ahead
      for (std::int64_t y = y0 + rows_per_item_; y < std::min(oh, y0 + 2 * rows_per_item_); ++y)
        prefetch_output_row(out + (y - y0) * ow, std::min(kBlock, p_.c - cb * kBlock), oh * ow, ow);
    if (rows_per_item_ > 1 && y0 + rows_per_item_ <= oh) {
      kStackedTiles[unit][ow - 1](in, row_step, w, bias, geometry_, epilogue_.activation, out, oh * ow,
                                  p_.c - cb * kBlock);
      return;
    }
    for (std::int64_t y = y0; y < std::min(oh, y0 + rows_per_item_); ++y, in += row_step, out += ow)
      for_each_tile(ow, [&](std::int64_t x0, int width) {
        kTiles[unit][width - 1](in + x0 * geometry_.in_pixel, row_step, w, bias, geometry_, epilogue_.activation,
                                out + x0, oh * ow, p_.c - cb * kBlock);
      }, kMaxDepthwiseTile);
  }

  ConvProblem p_;
  Epilogue epilogue_;
  int threads_;
  bool by_image_;  // whole images per thread (see shares_whole_images)
  PaddedBlockedImage image_;
  TileGeometry geometry_;
  std::int64_t c_blocks_;
  std::int64_t rows_per_item_;  // > 1: rows stacked into one tile (narrow maps)
  bool prefetch_output_;        // as cpu.02 (prefetch_output_pays)
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
