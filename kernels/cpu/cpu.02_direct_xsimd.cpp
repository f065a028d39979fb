// cpu.02_direct_xsimd: direct convolution on a channel-blocked layout with a register-blocked tile.
//
// What changes against cpu.00_reference: the loops are reordered so that the innermost work is
// one FMA of a broadcast input value with a vector of `block` output channels' weights (block =
// the SIMD width: 16 floats with AVX-512, 8 with AVX2, 4 with SSE2), and a tile of output channel
// blocks x output pixels of one row stays in registers for the whole reduction over C x R x S.
// Weights are packed once in plan as [K/block][C][R][S][block] (K padded with zero weights), so
// the weight vectors are read in one sequential stream. Inside run, each image is reordered
// NCHW -> NCHWc with its padding written as zeros (kernels/cpu/layout.hpp), so the inner loop has
// no bounds checks and any stride/padding/dilation costs nothing extra.
//
// Why faster: the reference does one dependent double add per multiply (latency-bound, ~3% of
// peak). Here up to 28 independent accumulators (AVX-512: 4 k blocks x 7 pixels, or 2 x 14 when
// K has only 2 blocks; microkernel.hpp) cover the 4-cycle latency of the two FMA pipes (8 FMAs in
// flight needed), and loads stay well under one per FMA: per kernel tap, 4 weight vectors shared
// by 7 pixels and one broadcast per pixel shared by its 4 FMAs (11 loads per 28 FMAs; 2 x 14
// needs 16). The tile never leaves registers until its epilogue, which adds the bias, applies the
// activation on the vector and writes NCHW directly through a 16 x 16 register transpose
// (AVX-512; in L1 otherwise; no NCHWc output buffer, no second pass over the output).
//
// Expected bound: compute-bound on FMA throughput when C x R x S is large enough, at most the
// tile's own ceiling, which `convlab peak` measures on L1-resident data. On the 2-core AVX-512 VM,
// quiet: the 4 x 7 tile alone reads 90-95% of the FMA peak and the 2 x 14 tile 83-86%; cpu.02 on
// mb32ic64ih56oc64oh56kh3ph1 ran 27.8 ms p50, 82% of the peak measured at the start of the run
// (oneDNN 75%) but 73-76% of the 350-363 GFLOP/s that quiet `peak` runs read, the input reorder
// 1.1 ms of it. Against the 2 x 14 build, six rounds of `convlab
// conv` then `convlab compare` on that layer (the order of the two builds alternated: a round's
// later runs were slower) gave median ratios 0.78-1.10, geometric mean 0.92. Tried in paired runs
// of a scratch harness and dropped as slower: splitting C into steps whose weights stay in L1
// (partial sums stored between steps: +0-23%), and 4 x 6 tiles (no register spill, but +2-8%;
// the 4 x 7 tile spills one accumulator, an L1 round trip per tap). Writing each image's copy
// row by row just ahead of the tiles that read it, rather than whole before them, measured ~14%
// slower (six alternating rounds of `convlab compare`, ratios 0.87-1.44).
// The epilogue's NCHW stores, not its shuffles, were the next cost (2026-11-30, a scratch harness
// timing two plans of the same layer alternately in one process, median of 40-60 per-pair
// ratios, which put a plan against itself at 0.997-1.012): without the epilogue the layer ran
// 0.88-0.90x the time; an 8 x 16 transpose instead of 16 x 16 (24 shuffles, not 64) changed
// nothing (0.99-1.01). Each tile writes 7 pixels into 64 output planes, and every first write
// to a line waited for its read-for-ownership miss. Asking for the next row's lines ahead
// (prefetch_output_row, when an image's output is over 256 KiB) gave 0.92-0.97x on this layer, 0.94 at
// batch 1, 0.98 on mb32ic32ih32oc32oh32kh3ph1; interleaving the k blocks' weights into one
// stream gave 0.97-0.99 here but 1.04-1.05 with 2 or 3 blocks, and was dropped.
// Small-C layers (lab-cnn's first, C = 3) run far below peak: only 27 multiply-adds per output.
// Threads: whole images per thread when the batch shares out (each thread reorders into its own
// cache-resident copy, no barrier); otherwise (batch 1) each image split by rows between them
// (for_each_blocked_image in kernels/cpu/layout.hpp).
// Determinism: each output is summed by one thread in the fixed order c, r, s; bias added last.
//
// Benchmark: build/convlab run --model lab-cnn --kernel cpu.02_direct_xsimd --batch 1,32
#include <algorithm>
#include <array>
#include <cstdint>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab::cpu {

namespace {

// One tile of one output row: kKBlocks x block output channels x kTile pixels (microkernel.hpp),
// then the epilogue: bias and activation on the vectors, and a transpose through L1 into NCHW.
template <int kTile, int kKBlocks, bool kUnitStride>
void conv_tile(const float* in, const float* w, const float* bias, const TileGeometry& g, Activation act,
               float* out, std::int64_t out_channel_stride, std::int64_t k_valid) {
  Vec acc[kKBlocks][kTile];
  accumulate<kTile, kKBlocks, kUnitStride>(acc, in, w, g);
  for (int kb = 0; kb < kKBlocks; ++kb)
    store_tile_nchw(acc[kb], Vec::load_aligned(bias + kb * kBlock), act, out + kb * kBlock * out_channel_stride,
                    out_channel_stride, k_valid - kb * kBlock);
}

// kTiles[unit stride][k blocks - 1][width - 1]: every tile a row split can produce.
template <bool kUnitStride>
constexpr auto conv_tiles() {
  return tile_table([]<int kW, int kKB>() { return &conv_tile<kW, kKB, kUnitStride>; });
}
constexpr std::array kTiles = {conv_tiles<false>(), conv_tiles<true>()};

class DirectXsimdConv final : public PlannedConv {
 public:
  DirectXsimdConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads)
      : p_(p),
        epilogue_(e),
        threads_(threads),
        by_image_(shares_whole_images(p.n, threads)),
        image_(padded_input_image(p, kBlock)),
        geometry_(tile_geometry(p, image_, p.c, p.c * p.r * p.s * kBlock)),
        k_blocks_((p.k + kBlock - 1) / kBlock),
        k_groups_(k_blocks_, kMaxKBlocks),
        prefetch_output_(prefetch_output_pays(p)),
        weight_(pack_blocked_weights(w.weight, p.k, kBlock)),  // [K/block][C][R][S][block]
        bias_(pack_blocked_bias(w.bias, p.k, kBlock)) {}

  std::size_t workspace_bytes() const override { return blocked_copies_bytes(image_, by_image_, threads_); }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(k_blocks_ * (p_.c * p_.r * p_.s + 1) * kBlock) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    float* copies = aligned_workspace(workspace);
    // An item is one output row for one group of output-channel blocks (collapse(y, group) order).
    const std::int64_t groups = k_groups_.parts;
    for_each_blocked_image(input, p_.n, image_, copies, by_image_, threads_, p_.out_h() * groups,
                           [&](std::int64_t n, const float* copy, std::int64_t item, int) {
                             convolve_row(copy, output, n, item / groups, item % groups);
                           });
  }

  // The input's NCHW -> padded NCHWc reorder alone. The output's conversion back to NCHW is the
  // epilogue's transpose, fused into the tile: it cannot be timed apart and stays in the total.
  bool changes_layout() const override { return true; }
  void run_layout_changes_only(const float* input, float*, void* workspace) const override {
    reorder_blocked_images(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_);
  }

 private:
  // Output row y of image n for the output-channel blocks of one group, from the padded image.
  void convolve_row(const float* blocked, float* output, std::int64_t n, std::int64_t y, std::int64_t group) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
    const std::int64_t kb0 = k_groups_.begin(group);
    const int kbs = k_groups_.size(group);
    const float* w = weight_.get() + kb0 * geometry_.w_block_stride;
    float* out_row = output + ((n * p_.k + kb0 * kBlock) * oh + y) * ow;
    const float* in_row = blocked + y * p_.stride_h * image_.row_stride();
    const auto& tiles = kTiles[p_.stride_w == 1 ? 1 : 0];
    if (prefetch_output_ && y + 1 < oh)
      prefetch_output_row(out_row + ow, std::min(kbs * kBlock, p_.k - kb0 * kBlock), oh * ow, ow);
    for_each_tile(
        ow,
        [&](std::int64_t x0, int width) {
          tiles[kbs - 1][width - 1](in_row + x0 * geometry_.in_pixel, w, bias_.get() + kb0 * kBlock, geometry_,
                                    epilogue_.activation, out_row + x0, oh * ow, p_.k - kb0 * kBlock);
        },
        max_tile_width(kbs));
  }

  ConvProblem p_;
  Epilogue epilogue_;
  int threads_;
  // Whole images per thread when the batch shares out evenly (or nearly: many images).
  bool by_image_;
  PaddedBlockedImage image_;
  TileGeometry geometry_;
  std::int64_t k_blocks_;
  EvenSplit k_groups_;  // the output-channel blocks, in groups of at most kMaxKBlocks
  bool prefetch_output_;  // each row asks for the next row's output lines (prefetch_output_pays)
  std::unique_ptr<float[], detail::AlignedFree> weight_, bias_;
};

}  // namespace

std::string direct_xsimd_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return fmt::format("groups = {}: the channel-blocked direct kernel needs groups = 1", p.groups);
  return {};
}

std::unique_ptr<PlannedConv> direct_xsimd_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  if (const std::string why = direct_xsimd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.02_direct_xsimd: {}: {}", to_string(p), why));
  return std::make_unique<DirectXsimdConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
