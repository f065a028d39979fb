// cpu.26_int8_linear: the int8 linear layer (a 1 x 1 convolution of a 1 x 1 map), output
// channels in lanes, on u8 x s8 quads of input channels (vpdpbusd).
//
// What changes against cpu.24_int8_direct_rows: a classifier's "image" is one pixel, so the
// kernels that put pixels in lanes fill one lane of kLanes and the ones that put channels in
// lanes transpose a tile for it. Here a lane is an output channel: the weights are packed in plan
// as [K / kLanes][C / 4][kLanes][4], each quad of input channels is broadcast as one word, and one
// vpdpbusd adds four products to each of kLanes outputs. A tile is up to 4 blocks of channels x
// 8 / blocks images, so each weight vector loaded serves several images. The zero point is cpu.23's compensation term; the epilogue
// requantises a vector of channels with their own multipliers and stores kLanes bytes.
// Threads only for large layers: a small classifier's whole work (lab-cnn's 64 -> 10 at batch 32:
// 512 vpdpbusd) is a fraction of the fork and join of two threads.
// Measured: against onednn.conv_int8, median of three interleaved runs (2-core Zen 5 VM, VNNI,
//   2026-12-05): the 10-class classifiers 3.2-3.7x (1.5-1.7 us; cpu.24 5-10 us), resnet18's fc
//   1.17x at batch 1 and 1.74x at batch 32, mobilenet-v2's 1.09x and 1.87x (cpu.23 0.4-0.6x).
// Run: build/convlab conv --precision int8 --problem mb32ic64ih1oc10oh1kh1 --kernel cpu.24_int8_direct_rows,cpu.26_int8_linear,onednn.conv_int8 --interleave
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

using namespace int8;

// A tile is kBlocks blocks of kLanes output channels x 8 / kBlocks images: 8 accumulators, enough
// independent vpdpbusd chains to hide its latency, each weight vector loaded feeding 8 / kBlocks
// of them. kBlocks = min(4, the layer's blocks): a classifier of 10 classes takes 8 images a tile.
constexpr int kAccumulators = 8, kMaxBlocks = 4;
// Quad products of a run from which its tiles are shared between threads, or weight bytes
// (streamed from L2 or further by one thread): below both the fork and join cost more than they save.
constexpr std::int64_t kParallelFrom = 1 << 15, kParallelWeightBytes = 64 << 10;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Int8LinearConv final : public PlannedInt8Conv {
 public:
  Int8LinearConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e, int threads)
      : p_(p), threads_(threads), quads_(ceil_div(p.c, 4)), blocks_(ceil_div(p.k, kLanes)),
        tile_blocks_(static_cast<int>(std::min<std::int64_t>(kMaxBlocks, blocks_))),
        padded_blocks_(ceil_div(blocks_, tile_blocks_) * tile_blocks_),
        input_zero_point_(static_cast<std::uint8_t>(w.input.zero_point)),
        weights_(static_cast<std::size_t>(padded_blocks_ * quads_ * kLanes), 0),
        compensation_(static_cast<std::size_t>(padded_blocks_ * kLanes), 0),
        requantize_(make_requantization(w, p.k, e.activation)) {
    auto* bytes = reinterpret_cast<std::int8_t*>(weights_.data());
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t c = 0; c < p.c; ++c) {
        const std::int8_t v = w.weight[static_cast<std::size_t>(k * p.c + c)];
        bytes[((k / kLanes * quads_ + c / 4) * kLanes + k % kLanes) * 4 + c % 4] = v;
        compensation_[static_cast<std::size_t>(k)] += w.input.zero_point * v;
      }
    // Lanes and blocks past K (zero weights, computed, never stored) need a multiplier to load.
    requantize_.multiplier.resize(compensation_.size(), 0.0f);
    requantize_.offset.resize(compensation_.size(), 0.0f);
  }

  std::size_t weight_bytes() const override {
    return (weights_.size() + compensation_.size() + 2 * requantize_.multiplier.size()) * 4;
  }

  void run(const std::uint8_t* input, std::uint8_t* output, void* /*workspace*/) const override {
    const bool seven_bit = seven_bit_input(input, p_.input_elems(), input_zero_point_);
    const std::int64_t tile_images = kAccumulators / tile_blocks_, image_tiles = ceil_div(p_.n, tile_images);
    const std::int64_t block_tiles = padded_blocks_ / tile_blocks_, items = image_tiles * block_tiles;
    const bool parallel = p_.n * blocks_ * quads_ >= kParallelFrom ||
                          static_cast<std::int64_t>(weights_.size()) * 4 >= kParallelWeightBytes;
#pragma omp parallel for schedule(static) num_threads(threads_) if (parallel)
    for (std::int64_t item = 0; item < items; ++item) {
      const std::int64_t n0 = item / block_tiles * tile_images, b0 = item % block_tiles * tile_blocks_;
      switch (tile_blocks_) {
        case 1: tile<1>(input, n0, b0, output, seven_bit); break;
        case 2: tile<2>(input, n0, b0, output, seven_bit); break;
        case 3: tile<3>(input, n0, b0, output, seven_bit); break;
        default: tile<4>(input, n0, b0, output, seven_bit); break;
      }
    }
  }

 private:
  template <int kBlocks>
  void tile(const std::uint8_t* input, std::int64_t n0, std::int64_t b0, std::uint8_t* output, bool seven_bit) const {
    if (seven_bit) {
      tile<kBlocks, true>(input, n0, b0, output);
    } else {
      tile<kBlocks, false>(input, n0, b0, output);
    }
  }
  // Output channels of blocks [b0, b0 + kBlocks) of images [n0, n0 + kImages). Images past the
  // batch read the last one's bytes and blocks past K zero weights: computed, not stored, so the
  // loop over quads has no branch.
  template <int kBlocks, bool kSevenBit, int kImages = kAccumulators / kBlocks>
  void tile(const std::uint8_t* input, std::int64_t n0, std::int64_t b0, std::uint8_t* output) const {
    const std::uint8_t* in[kImages];
    for (int i = 0; i < kImages; ++i) in[i] = input + std::min(n0 + i, p_.n - 1) * p_.c;
    IVec acc[kBlocks][kImages];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
    CONVLAB_TILE_LOOP
    for (auto& row : acc) {
      CONVLAB_TILE_LOOP
      for (IVec& a : row) a = zero();
    }
    const std::int32_t* w = weights_.data() + b0 * quads_ * kLanes;
    const std::int64_t block_stride = quads_ * kLanes;
    const auto step = [&](std::int64_t q, const std::int32_t (&words)[kImages]) {
      IVec wv[kBlocks];
      CONVLAB_TILE_LOOP
      for (int b = 0; b < kBlocks; ++b) wv[b] = load(w + b * block_stride + q * kLanes);
      CONVLAB_TILE_LOOP
      for (int i = 0; i < kImages; ++i) {
        const IVec x = splat(words[i]);
        CONVLAB_TILE_LOOP
        for (int b = 0; b < kBlocks; ++b) acc[b][i] = dot4<kSevenBit>(acc[b][i], x, wv[b]);
      }
    };
    const std::int64_t whole = p_.c / 4;
    for (std::int64_t q = 0; q < whole; ++q) {
      std::int32_t words[kImages];
      for (int i = 0; i < kImages; ++i) std::memcpy(&words[i], in[i] + 4 * q, 4);
      step(q, words);
    }
    if (whole < quads_) {  // the last channels, fewer than four: the slots past C meet weight 0
      std::int32_t words[kImages] = {};
      for (int i = 0; i < kImages; ++i) std::memcpy(&words[i], in[i] + 4 * whole, static_cast<std::size_t>(p_.c % 4));
      step(whole, words);
    }
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    CONVLAB_TILE_LOOP
    for (int b = 0; b < kBlocks; ++b) {
      const std::int64_t k0 = (b0 + b) * kLanes;
      if (k0 >= p_.k) break;
      const IVec comp = load(compensation_.data() + k0);
      const int count = static_cast<int>(std::min<std::int64_t>(kLanes, p_.k - k0));
      CONVLAB_TILE_LOOP
      for (int i = 0; i < kImages; ++i) {
        if (n0 + i >= p_.n) break;  // not in the loop's condition: its count stays a constant (tile_loop.hpp)
        alignas(64) std::int32_t q[kLanes];
        requantize(sub(acc[b][i], comp), requantize_.multiplier.data() + k0, requantize_.offset.data() + k0, zp, lo, hi, q);
        store_bytes(load(q), 0, count, output + (n0 + i) * p_.k + k0);
      }
    }
  }

  ConvProblem p_;
  int threads_;
  std::int64_t quads_, blocks_;
  int tile_blocks_;               // blocks of kLanes output channels per tile
  std::int64_t padded_blocks_;    // blocks_ rounded up to whole tiles
  std::uint8_t input_zero_point_;
  std::vector<std::int32_t> weights_;       // [padded blocks][C / 4][kLanes] quads of s8 weights
  std::vector<std::int32_t> compensation_;  // zp * sum of each channel's weights, padded the same
  Requantization requantize_;               // multiplier and offset padded the same way
};

}  // namespace

std::string int8_linear_unsupported(const ConvProblem& p) {
  if (p.groups != 1 || p.h != 1 || p.w != 1 || p.r != 1 || p.s != 1 || p.pad_h != 0 || p.pad_w != 0 ||
      p.padded_h() != 1 || p.padded_w() != 1)
    return "a linear layer only (a 1 x 1 convolution of a 1 x 1 map, groups 1, no padding)";
  return {};
}

std::unique_ptr<PlannedInt8Conv> int8_linear_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_linear_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.26_int8_linear cannot run {}: {}", to_string(p), why));
  return std::make_unique<Int8LinearConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
