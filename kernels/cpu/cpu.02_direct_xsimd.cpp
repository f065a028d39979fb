// cpu.02_direct_xsimd: direct convolution on a channel-blocked layout with a register tile.
//
// What changes against cpu.00_reference: the innermost work is one FMA of a broadcast input value
// with a vector of `block` output channels' weights (block = the SIMD width: 16 floats with
// AVX-512, 8 with AVX2, 4 with NEON or SSE2), and a tile of k blocks x output pixels stays in
// registers for the whole reduction over C x R x S. Weights are packed once in plan as
// [K/block][C][R][S][block]; run reorders each image to a zero-padded NCHWc copy (no bounds checks,
// any stride/padding/dilation) and writes NCHW straight from the tile's epilogue.
// Why faster: independent accumulators cover the FMA latency and loads stay below one per FMA:
// AVX-512 and NEON (32 registers) 4 x 7, 3 x 9 or 2 x 14 tiles (4 weight vectors + 7 broadcasts per
// 28 FMAs, ...), plan timing them on all but tiny layers, keeping the fastest for this machine; AVX2
// (16) 2 x 6, 2 + 6 per 12 (microkernel.hpp). `convlab peak` measures a tile's ceiling.
// Rows too short for them (8 pixels: two tiles of 4) take tiles spanning rows: two whole rows (7 x 7).
// 1 x 1 layers may read the NCHW input in place (no reorder), plan measuring which is faster.
// Bound: FMA throughput when C x R x S is large, less the reorder (~4%), weights from L2 (~4%)
// and the output stores; small-C layers (C = 3: 27 multiply-adds per output) run far below it.
// Measured: 176-182 GFLOP/s, 88-89% of the FMA peak, 1.04-1.08x oneDNN on mb32ic64ih56oc64oh56kh3ph1
//   (2-core Zen 3 VM, AVX2); ~75% of a quiet peak, 1.1x oneDNN on a 2-core Ice Lake VM (AVX-512, 4 x 7).
//   Zen 3, against oneDNN: 1 x 1 in place (K <= 64) 1.0-1.1x -> 1.1-1.8x at batch 1, 1.0-1.05x -> 1.1-1.2x
//   at batch 32. The history, kept and dropped: docs/kernel-notes.md#cpu02_direct_xsimd
// Run: build/convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.02_direct_xsimd,onednn.conv --interleave
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/direct_xsimd.hpp"
#include "kernels/cpu/fastest_variant.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab::cpu {

namespace {

// Every tile's epilogue: for each of its k blocks, bias and activation on the vectors, then into
// NCHW (store_tile_nchw), the tile's pixels consecutive from `out`.
template <int kTile, int kKBlocks>
[[gnu::always_inline]] inline void store_tiles_nchw(const Vec (&acc)[kKBlocks][kTile], const float* bias,
                                                    Activation act, float* out, std::int64_t out_channel_stride,
                                                    std::int64_t k_valid) {
  CONVLAB_TILE_LOOP_GCC_TOO
  for (int kb = 0; kb < kKBlocks; ++kb)
    store_tile_nchw(acc[kb], Vec::load_aligned(bias + kb * kBlock), act, out + kb * kBlock * out_channel_stride,
                    out_channel_stride, k_valid - kb * kBlock);
}

// One tile of one output row: kKBlocks x block output channels x kTile pixels (microkernel.hpp),
// then the epilogue (store_tiles_nchw).
template <int kTile, int kKBlocks, int kStride, int kSide>
void conv_tile(const float* in, const float* w, const float* bias, const TileGeometry& g, Activation act,
               float* out, std::int64_t out_channel_stride, std::int64_t k_valid) {
  Vec acc[kKBlocks][kTile];
  accumulate<kTile, kKBlocks, kStride, kSide>(acc, in, w, g);
  store_tiles_nchw(acc, bias, act, out, out_channel_stride, k_valid);
}

// The kernel sizes whose tap loops are unrolled (accumulate_at's kSide), as kTiles' first index:
// any (run-time loops), 3 x 3, and 1 x 1, where the run-time tap loops' setup per input channel
// cost as many instructions as the tile's FMAs (mb1ic960ih7oc320oh7kh1: 0.6x oneDNN).
constexpr std::array kSides = {0, 3, 1};
int side_index(const ConvProblem& p) { return p.r == 3 && p.s == 3 ? 1 : p.r == 1 && p.s == 1 ? 2 : 0; }

// The pixel steps the tiles know at compile time, in blocks (pixel_step_kind): 1 and 2 (full
// channel blocks), and 0 for the others (any stride, or a copy blocked by C < block), read at run time.
// A constant step makes the broadcasts' offsets immediates; at run time each pixel's offset takes a
// register, and the 14-wide tile's reloaded 6 of them from the stack at every tap (resnet18's
// stride-2 3 x 3 layers on Zen 5, against oneDNN in the same runs, medians of three: layer2.0.conv1
// 1.01x -> 1.06x at batch 1, layer3.0.conv1 1.16x -> 1.25x; within noise at batch 32).
int pixel_step_kind(const ConvProblem& p, const PaddedBlockedImage& image) {
  if (image.block != kBlock) return 0;
  return p.stride_w == 1 || p.stride_w == 2 ? static_cast<int>(p.stride_w) : 0;
}

// kTiles[side][pixel step kind][k blocks - 1][width - 1]: every tile a row split can produce.
template <int kStride, int kSide>
constexpr auto conv_tiles() {
  return tile_table([]<int kW, int kKB>() { return &conv_tile<kW, kKB, kStride, kSide>; });
}
template <int kSide>
constexpr auto side_tiles() {
  return std::array{conv_tiles<0, kSide>(), conv_tiles<1, kSide>(), conv_tiles<2, kSide>()};
}
constexpr std::array kTiles = {side_tiles<kSides[0]>(), side_tiles<kSides[1]>(), side_tiles<kSides[2]>()};

// A tile of kTile neighbouring pixels of an NCHW input's plane, for a 1 x 1 layer that reads its
// input in place (can_read_input_in_place): channels H*W floats apart, pixels one.
template <int kTile, int kKBlocks>
void conv_tile_in_place(const float* in, const float* w, const float* bias, const TileGeometry& g, Activation act,
                        float* out, std::int64_t out_channel_stride, std::int64_t k_valid) {
  Vec acc[kKBlocks][kTile];
  accumulate_at<kTile, kKBlocks, 1, true>(acc, in, w, g, [](int x) { return x; });
  store_tiles_nchw(acc, bias, act, out, out_channel_stride, k_valid);
}
constexpr auto kInPlaceTiles = tile_table([]<int kW, int kKB>() { return &conv_tile_in_place<kW, kKB>; });

// A tile of kTile pixels anywhere in the output plane (several rows), pixel x's taps at
// in + offsets[x]; its outputs are consecutive in the NCHW plane, so the epilogue is conv_tile's.
template <int kTile, int kKBlocks, int kSide>
void conv_plane_tile(const float* in, const std::int64_t* offsets, const float* w, const float* bias,
                     const TileGeometry& g, Activation act, float* out, std::int64_t out_channel_stride,
                     std::int64_t k_valid) {
  std::int64_t off[kTile];
  std::copy_n(offsets, kTile, off);
  Vec acc[kKBlocks][kTile];
  accumulate_at<kTile, kKBlocks, kSide>(acc, in, w, g, [&off](int x) { return off[x]; });
  store_tiles_nchw(acc, bias, act, out, out_channel_stride, k_valid);
}
template <int kSide>
constexpr auto plane_tiles() {
  return tile_table([]<int kW, int kKB>() { return &conv_plane_tile<kW, kKB, kSide>; });
}
constexpr std::array kPlaneTiles = {plane_tiles<kSides[0]>(), plane_tiles<kSides[1]>(), plane_tiles<kSides[2]>()};

// A tile of two whole output rows of kCols pixels each, for planes whose rows are too short for a
// tile (7 x 7: two rows fill a 2 x 14 tile). Its pixels' offsets are constants plus one run-time
// row step, where the whole-plane tiles' offset table took a register per pixel: GCC ran out of
// general registers and reloaded 8 of the 14 offsets from the stack at every tap (resnet18's
// 512-channel 7 x 7 layer on Zen 5 at batch 2: 1.216 -> 1.146 ms, medians of eight alternating
// runs). kStride: the pixel step in blocks (pixel_step_kind 1 or 2), a constant for the same reason.
template <int kCols, int kKBlocks, int kStride, int kSide>
void conv_row_pair_tile(const float* in, std::int64_t row_step, const float* w, const float* bias,
                        const TileGeometry& g, Activation act, float* out, std::int64_t out_channel_stride,
                        std::int64_t k_valid) {
  Vec acc[kKBlocks][2 * kCols];
  accumulate_at<2 * kCols, kKBlocks, kSide>(
      acc, in, w, g, [=](int x) { return (x < kCols ? 0 : row_step) + x % kCols * kStride * kBlock; });
  store_tiles_nchw(acc, bias, act, out, out_channel_stride, k_valid);
}
// kRowPairTiles[side][pixel step kind - 1][k blocks - 1][columns - 1], null where two rows overflow
// the tile.
template <int kStride, int kSide>
constexpr auto row_pair_tiles() {
  return tile_table([]<int kW, int kKB>() {
    using Fn = decltype(&conv_row_pair_tile<1, 1, kStride, kSide>);
    if constexpr (2 * kW <= max_tile_width(kKB)) return &conv_row_pair_tile<kW, kKB, kStride, kSide>;
    else return Fn{nullptr};
  });
}
template <int kSide>
constexpr auto side_row_pair_tiles() {
  return std::array{row_pair_tiles<1, kSide>(), row_pair_tiles<2, kSide>()};
}
constexpr std::array kRowPairTiles = {side_row_pair_tiles<kSides[0]>(), side_row_pair_tiles<kSides[1]>(),
                                      side_row_pair_tiles<kSides[2]>()};

// The register tiles plan chooses between, as output-channel blocks per tile (the width follows:
// max_tile_width): with 32 registers 4 x 7, 3 x 9 and 2 x 14, whose loads per FMA and epilogues
// differ, and which is fastest depends on the machine (two 512-bit FMA pipes or one, as on Zen 4)
// and the layer; with 16 (AVX2) only 2 x 6: 3 x 4 and 4 x 3 were 0.87x its speed on Zen 3
// (bench/RESULTS.md, "the AVX2 tile"). Groupings that split the k blocks alike count once.
std::vector<int> tile_choices(std::int64_t k_blocks) {
  std::vector<int> choices;
  std::vector<std::int64_t> parts;
  for (int per_tile = kMaxKBlocks; per_tile >= std::max(2, kMaxKBlocks / 2); --per_tile) {
    const std::int64_t split = EvenSplit(k_blocks, per_tile).parts;
    if (std::ranges::find(parts, split) != parts.end()) continue;
    parts.push_back(split);
    choices.push_back(per_tile);
  }
  return choices;
}
// Pixels per item of the whole-plane schedule: a few tiles, so that small planes still give the
// threads several items per image. When the threads share each image (batch 1), the chunks are as
// many as make the items (chunks x k groups) a multiple of the threads, the nearest such count, so
// that no thread waits at the image's end for another's extra chunk: an 8 x 8 plane's 3 chunks
// had one thread doing two while the other did one.
std::int64_t plane_chunk_pixels(std::int64_t plane, int widest, std::int64_t k_groups, int threads, bool by_image) {
  const std::int64_t parts = (plane + 4 * widest - 1) / (4 * widest);
  if (!by_image)
    for (std::int64_t d = 0; d < parts; ++d)
      for (std::int64_t even : {parts - d, parts + d})
        if (even >= 1 && even <= plane && even * k_groups % threads == 0) return (plane + even - 1) / even;
  return 4 * widest;
}
// The input copy's channel block: the SIMD width, or C itself for strided layers of fewer channels
// (first layers): a 3-channel image padded to 16 channels wrote 5x the floats it holds, zeros, 30%
// of a 224 x 224 layer's time (mb1ic3ih224oc32oh112kh3sh2ph1: 0.7x -> 0.85-0.95x oneDNN). The
// strided tiles step pixels by a run-time stride, so any block does; at stride 1 a smaller block
// would lose the unit-stride tiles' constant offsets (C = 3 at 32 x 32, batch 32: 1.15x -> 0.85x).
std::int64_t input_block(const ConvProblem& p) { return p.stride_w > 1 ? std::min<std::int64_t>(p.c, kBlock) : kBlock; }

// A 1 x 1, stride-1, unpadded convolution over H x W planes is the same sums over 1 x H*W planes
// (NCHW planes are contiguous, and so are the copy's). Planes whose rows are too short for the row
// tiles (7 x 7, 8 x 8) then run unit-stride row tiles, whose pixel offsets are constants, instead
// of the whole-plane tiles and their offset table. Only where the items stay enough for the
// threads: a plane's one row leaves the output-channel groups as an image's only items.
ConvProblem one_row_if_pointwise(const ConvProblem& p, int threads, int tile_k_blocks) {
  const EvenSplit groups((p.k + kBlock - 1) / kBlock, tile_k_blocks);
  if (p.r != 1 || p.s != 1 || p.stride_h != 1 || p.stride_w != 1 || p.has_padding() || p.h == 1 ||
      !rows_too_short(p.w, max_tile_width(groups.size(0))) ||
      !(shares_whole_images(p.n, threads) || groups.parts >= 2 * threads))
    return p;
  ConvProblem row = p;
  row.w = p.h * p.w;
  row.h = 1;
  return row;
}

// 1 x 1, stride-1, unpadded layers may read their NCHW input in place, with no reorder: a tile's
// broadcasts are then H*W floats apart from channel to channel instead of one, and its pixels one
// float apart. The reorder reads and writes every input float once more, which the layer's K output
// channels share; in place, each group of output channels reads the input's lines again, from
// further away. Which wins depends on K and the machine: on Zen 3 (AVX2) in place won with K = 16-64
// (mobilenet-v2's projections: 1.00-1.08x -> 1.14-1.84x oneDNN at batch 1) and lost from K = 144
// (0.99x -> 0.79x); on a Zen 5 VM it won by 1.4-1.7x at K = 96 (mb1ic384ih14oc96oh14kh1). So plan
// measures both (plan_fastest_tile); K <= kInPlaceMaxOutputs is the choice where it does not.
// Never where a tile's channel rows fall into too few L1 sets: planes a multiple of 4 KiB apart map
// every channel's line to one set (8 ways): mobilenet-tiny's 32 x 32, C = 16 layer ran 0.81x -> 0.58x.
constexpr std::int64_t kInPlaceMaxOutputs = 64;
constexpr std::int64_t kL1SetSpan = 4096, kL1Line = 64, kL1Ways = 8;  // 64 sets of 8 lines (x86 L1D)
bool can_read_input_in_place(const ConvProblem& p) {
  const std::int64_t plane_bytes = p.h * p.w * static_cast<std::int64_t>(sizeof(float));
  // The sets that a pixel's line in each channel can fall into, one plane apart.
  const std::int64_t sets_used = std::min(kL1SetSpan / std::gcd(plane_bytes, kL1SetSpan), kL1SetSpan / kL1Line);
  return p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && !p.has_padding() &&
         (p.c + sets_used - 1) / sets_used <= kL1Ways;
}

// Whether a plane whose rows are too short for the tiles takes row-pair tiles (conv_row_pair_tile):
// two rows fill at least 3/4 of the widest tile, and the pixel step is a constant (pixel_step_kind).
// Otherwise the whole-plane tiles and their offset table.
bool takes_row_pairs(const ConvProblem& p, const PaddedBlockedImage& image, int widest, bool in_place) {
  const std::int64_t pair = 2 * p.out_w();
  return !in_place && p.out_h() >= 2 && rows_too_short(p.out_w(), widest) && pair <= widest && 4 * pair >= 3 * widest &&
         pixel_step_kind(p, image) > 0;
}

// A tile's strides over an NCHW image, for layers read in place (can_read_input_in_place).
TileGeometry nchw_tile_geometry(const ConvProblem& p) {
  const std::int64_t plane = p.h * p.w;
  return {.channels = p.c, .r = 1, .s = 1, .in_block_stride = kBlock * plane, .in_tap_row = 0, .in_tap_col = 0,
          .in_pixel = 1, .w_block_stride = p.c * kBlock, .in_channel = plane};
}

class DirectXsimdConv final : public PlannedConv {
 public:
  // tile_k_blocks: output-channel blocks per register tile (tile_choices); in_place: read the NCHW
  // input in place where the layer allows it (can_read_input_in_place).
  DirectXsimdConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads, int tile_k_blocks, bool in_place)
      : p_(one_row_if_pointwise(p, threads, tile_k_blocks)),
        epilogue_(e),
        threads_(threads),
        by_image_(shares_whole_images(p_.n, threads)),
        image_(padded_input_image(p_, input_block(p_))),
        in_place_(in_place && can_read_input_in_place(p_)),
        geometry_(in_place_ ? nchw_tile_geometry(p_) : tile_geometry(p_, image_, p_.c, p_.c * p_.r * p_.s * kBlock)),
        k_blocks_((p_.k + kBlock - 1) / kBlock),
        k_groups_(k_blocks_, tile_k_blocks),
        widest_(max_tile_width(k_groups_.size(0))),
        side_(side_index(p_)),
        pixel_step_(pixel_step_kind(p_, image_)),
        prefetch_output_(prefetch_output_pays(p_)),
        plane_(rows_too_short(p_.out_w(), widest_)),
        row_pairs_(takes_row_pairs(p_, image_, widest_, in_place_)),
        chunks_(p_.out_h() * p_.out_w(), plane_chunk_pixels(p_.out_h() * p_.out_w(), widest_, k_groups_.parts, threads,
                                                          by_image_)),
        shared_copy_(plane_ || row_pairs_ || p_.out_h() == 1 ? SharedCopy::per_thread : SharedCopy::by_rows),
        plane_offsets_(plane_ && !in_place_ && !row_pairs_ ? plane_offset_table(p_, image_, geometry_.in_pixel)
                                            : std::vector<std::int64_t>()),
        weight_(pack_blocked_weights(w.weight, p.k, kBlock)),  // [K/block][C][R][S][block]
        bias_(pack_blocked_bias(w.bias, p.k, kBlock)) {}

  std::size_t workspace_bytes() const override {
    return in_place_ ? 0 : blocked_copies_bytes(image_, by_image_, threads_, 1, shared_copy_);
  }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(k_blocks_ * (p_.c * p_.r * p_.s + 1) * kBlock) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    float* copies = in_place_ ? nullptr : aligned_workspace(workspace);  // nullptr: no reorder
    // An item is one output row for one group of output-channel blocks (collapse(y, group) order).
    // Or, with rows too short for full tiles, one chunk of the output plane; or a pair of rows,
    // group by group (a thread's share of a batch-1 layer then reads its groups' weights once).
    const std::int64_t groups = k_groups_.parts, pairs = (p_.out_h() + 1) / 2;
    for_each_blocked_image(input, p_.n, image_, copies, by_image_, threads_,
                           (row_pairs_ ? pairs : plane_ ? chunks_.parts : p_.out_h()) * groups,
                           [&](std::int64_t n, const float* copy, std::int64_t item, int) {
                             if (row_pairs_) convolve_row_pair(copy, output, n, item % pairs, item / pairs);
                             else if (plane_) convolve_chunk(copy, output, n, item / groups, item % groups);
                             else convolve_row(copy, output, n, item / groups, item % groups);
                           },
                           1, shared_copy_);
  }

  std::string explain() const override {
    if (!in_place_) return explanation_;
    const std::string in_place = "reads the NCHW input in place (1 x 1: no reorder)";
    return explanation_.empty() ? in_place : explanation_ + "; " + in_place;
  }
  void set_explanation(std::string why) { explanation_ = std::move(why); }
  int tile_k_blocks() const { return k_groups_.size(0); }
  // The plan's name in the tile timings (fastest_variant.hpp).
  std::string name() const { return fmt::format("{} x {}{}", tile_k_blocks(), widest_, in_place_ ? " in place" : ""); }

  // The input's NCHW -> padded NCHWc reorder alone. The output's conversion back to NCHW is the
  // epilogue's transpose, fused into the tile: it cannot be timed apart and stays in the total.
  bool changes_layout() const override { return !in_place_; }
  void run_layout_changes_only(const float* input, float*, void* workspace) const override {
    reorder_blocked_images(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_, 1, shared_copy_);
  }

 private:
  // Output row y of image n for the output-channel blocks of one group, from the padded image.
  void convolve_row(const float* blocked, float* output, std::int64_t n, std::int64_t y, std::int64_t group) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
    const std::int64_t kb0 = k_groups_.begin(group);
    const int kbs = k_groups_.size(group);
    const float* w = weight_.get() + kb0 * geometry_.w_block_stride;
    float* out_row = output + ((n * p_.k + kb0 * kBlock) * oh + y) * ow;
    const float* in_row = blocked + y * p_.stride_h * (in_place_ ? p_.w : image_.row_stride());
    const auto& tiles = in_place_ ? kInPlaceTiles : kTiles[side_][pixel_step_];
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

  // Output rows 2 * pair and the next (if any) of image n for the output-channel blocks of one group.
  void convolve_row_pair(const float* blocked, float* output, std::int64_t n, std::int64_t pair,
                         std::int64_t group) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w(), y = 2 * pair;
    if (y + 1 == oh) return convolve_row(blocked, output, n, y, group);
    const std::int64_t kb0 = k_groups_.begin(group), row_step = p_.stride_h * image_.row_stride();
    const int kbs = k_groups_.size(group);
    kRowPairTiles[side_][pixel_step_ - 1][kbs - 1][ow - 1](
        blocked + y * row_step, row_step, weight_.get() + kb0 * geometry_.w_block_stride, bias_.get() + kb0 * kBlock,
        geometry_, epilogue_.activation, output + ((n * p_.k + kb0 * kBlock) * oh + y) * ow, oh * ow,
        p_.k - kb0 * kBlock);
  }

  // Pixels [begin, begin + size) of chunk `chunk` of image n's output plane, read as one long row.
  void convolve_chunk(const float* blocked, float* output, std::int64_t n, std::int64_t chunk, std::int64_t group) const {
    const std::int64_t plane = p_.out_h() * p_.out_w();
    const std::int64_t kb0 = k_groups_.begin(group), first = chunks_.begin(chunk);
    const int kbs = k_groups_.size(group);
    const float* w = weight_.get() + kb0 * geometry_.w_block_stride;
    float* out = output + (n * p_.k + kb0 * kBlock) * plane + first;
    for_each_tile(
        chunks_.size(chunk),
        [&](std::int64_t x0, int width) {
          if (in_place_)  // the plane's pixels are consecutive in NCHW: a row tile reads them
            return kInPlaceTiles[kbs - 1][width - 1](blocked + first + x0, w, bias_.get() + kb0 * kBlock, geometry_,
                                                     epilogue_.activation, out + x0, plane, p_.k - kb0 * kBlock);
          kPlaneTiles[side_][kbs - 1][width - 1](blocked, plane_offsets_.data() + first + x0, w, bias_.get() + kb0 * kBlock,
                                          geometry_, epilogue_.activation, out + x0, plane, p_.k - kb0 * kBlock);
        },
        max_tile_width(kbs));
  }

  ConvProblem p_;
  Epilogue epilogue_;
  int threads_;
  // Whole images per thread when the batch shares out evenly (or nearly: many images).
  bool by_image_;
  PaddedBlockedImage image_;
  bool in_place_;  // the input read in place (can_read_input_in_place): no NCHWc copy
  TileGeometry geometry_;
  std::int64_t k_blocks_;
  EvenSplit k_groups_;  // the output-channel blocks, in groups of at most the tile's
  int widest_;          // the widest tile for those groups
  int side_;              // kTiles' first index: tap loops unrolled for 3 x 3 and 1 x 1 kernels
  int pixel_step_;        // kTiles' second: the pixel step, if a constant (pixel_step_kind)
  bool prefetch_output_;  // each row asks for the next row's output lines (prefetch_output_pays)
  bool plane_;            // whole-plane tiles (rows_too_short), in chunks_ of the output plane
  bool row_pairs_;        // ... or, where they fill the tile, row-pair tiles (takes_row_pairs)
  EvenSplit chunks_;
  // At batch 1 on planes of rows too short for the tiles (a 1 x 1 plane read as one row among
  // them) an item reads most of the small image: a group's rows (row pairs), or the whole plane
  // (one row or chunk), so each thread copies it for itself (mobilenet-v2's features.17.conv.2 at
  // batch 1, 1.04x -> 1.24x oneDNN, Zen 5).
  SharedCopy shared_copy_;
  std::vector<std::int64_t> plane_offsets_;  // plane_offset_table, when plane_
  std::unique_ptr<float[], detail::AlignedFree> weight_, bias_;
  std::string explanation_;  // the tile's measurement, when plan measured
};

// Plans p with each register tile of tile_choices, each read in place and from the reorder where
// the layer allows both, and keeps the fastest (fastest_variant.hpp). The choice changes the speed
// only: each output is the same sum in the same order whatever the tile and the input's layout.
std::unique_ptr<DirectXsimdConv> plan_fastest_tile(const ConvProblem& p, const ConvWeights& w, Epilogue e,
                                                   int threads) {
  struct Choice {
    int per_tile;
    bool in_place;
  };
  std::vector<Choice> choices;
  const bool may_read_in_place = can_read_input_in_place(p);
  for (const int per_tile : tile_choices((p.k + kBlock - 1) / kBlock)) {
    if (may_read_in_place) choices.push_back({per_tile, true});
    choices.push_back({per_tile, false});
  }
  if (!worth_measuring(choices.size(), p, threads))
    return std::make_unique<DirectXsimdConv>(p, w, e, threads, choices[0].per_tile, p.k <= kInPlaceMaxOutputs);
  return plan_fastest_variant(
      p, choices, threads, fmt::format("cpu.02 register tile {} {}", to_string(p), to_string(e.activation)),
      [&](const ConvProblem& q, const Choice& c) {
        return std::make_unique<DirectXsimdConv>(q, w, e, threads, c.per_tile, c.in_place);
      },
      [](const Choice& c) { return fmt::format("{} {}", c.per_tile, c.in_place ? "in-place" : "reordered"); });
}

}  // namespace

std::string direct_xsimd_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return fmt::format("groups = {}: the channel-blocked direct kernel needs groups = 1", p.groups);
  return {};
}

namespace {
// What both entry points refuse: a bad problem or weights, and what cpu.02 cannot run.
void check_direct_xsimd(const ConvProblem& p, const ConvWeights& w) {
  p.validate();
  check_weights(p, w);
  if (const std::string why = direct_xsimd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.02_direct_xsimd: {}: {}", to_string(p), why));
}
}  // namespace

std::unique_ptr<PlannedConv> direct_xsimd_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  check_direct_xsimd(p, w);
  return plan_fastest_tile(p, w, e, omp_get_max_threads());
}

std::unique_ptr<PlannedConv> direct_xsimd_plan_as(const ConvProblem& p, const ConvWeights& w, Epilogue e, int tile_k_blocks,
                                                  bool in_place) {
  check_direct_xsimd(p, w);
  if (tile_k_blocks < 1 || tile_k_blocks > kMaxKBlocks)
    throw InputError(fmt::format("cpu.02_direct_xsimd: a register tile of {} output-channel blocks (1 to {})", tile_k_blocks,
                                 kMaxKBlocks));
  return std::make_unique<DirectXsimdConv>(p, w, e, omp_get_max_threads(), tile_k_blocks, in_place);
}

}  // namespace convlab::cpu
