// cpu.24_int8_direct_rows: int8 direct convolution along NCHW output rows on u8 x s8 quads
// (vpdpbusd), with no transposes.
//
// What changes against cpu.23_int8_direct_vnni: cpu.08's layout for int8. A vector holds kLanes
// neighbouring output pixels of one channel; the tile is kChannels output channels x kVectors
// vectors, each weight quad broadcast: per step kVectors loads, kChannels broadcasts, kChannels x
// kVectors vpdpbusd. Each channel's requantised bytes go straight into its NCHW row.
// The quads: four input bytes of a pixel that meet four weights. With C >= 4, four channels at
// one tap, packed straight from the input rows; with few channels (first layers) or a stride
// across the row, (channel, kernel column) pairs from a zero-point-padded copy, so a 5 x 5 kernel
// on one channel takes 2 quads per kernel row instead of 5, and the packing does the stride.
// Small maps: where it needs fewer vectors, a band's rows are one flat run of pixels (lanes past a
// row's end are computed, not stored); rows of 8 columns go two to a vector (8 x 8: 4 vectors).
// The zero point: cpu.23's compensation term (zp * sum w per output channel), padding holds zp.
// Why faster: on first and pointwise layers cpu.23's transposes in and out and its per-pixel
// setup cost more than its vpdpbusd; here the epilogue is a store per vector.
// Measured: at batch 32 against onednn.conv_int8 (2-core Ice Lake VM, VNNI, interleaved): first
//   layers (mb32ic3ih32oc16oh32kh3ph1) 1.9x, cpu.23 0.7x; pointwise 1.3-2.0x, cpu.23 0.6-1.2x;
//   1 x 1 stride-2 shortcuts 1.5-1.9x, cpu.23 1.3-1.5x. Zen 3 VM (AVX2, the seven-bit path):
//   mb32ic64ih56oc64oh56kh3ph1 1.04-1.09x, 84-91%. Zen 5 VM (2026-12-05): 8 x 8 maps (two-row
//   vectors) 1.4x, cpu.23 1.1x; the first layer 0.064 -> 0.054 ms after its epilogue was cut.
// Run: build/convlab conv --precision int8 --problem mb32ic3ih32oc16oh32kh3ph1 --kernel cpu.23_int8_direct_vnni,cpu.24_int8_direct_rows,onednn.conv_int8 --interleave
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

using namespace int8;

constexpr int kChannels = 4;                    // output channels per tile
constexpr int kVectors = kLanes == 16 ? 6 : 3;  // pixel vectors per tile: 24 accumulators of 32 registers, 12 of 16
// The seven-bit path's tile (int8_simd.hpp) needs two more registers, for a product and the ones of
// vpmaddwd: 12 accumulators, 3 pixel vectors and a weight already fill 16 (AVX2), 24 + 6 + 1 of 32.
constexpr int kSevenBitVectors = kLanes == 16 ? 5 : 2;
constexpr int kMaxSegments = 3;                 // row pieces of one flat vector (rows of at least 8 words)
// A band's packed input is kept about this size, so that it stays in the L2 cache while every
// output channel reads it.
constexpr std::int64_t kBandBytes = 256 << 10;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// One vector of a tile: where its lanes read the packed band, and the runs of lanes it stores.
struct Segment {
  int from = 0, count = 0;     // lanes
  std::int64_t out_offset = 0; // in the output plane
};
struct PixelVector {
  std::int64_t in_offset = 0;
  int segments = 0;
  Segment segment[kMaxSegments];
  bool whole() const { return segments == 1 && segment[0].from == 0 && segment[0].count == kLanes; }
};

struct Geometry {
  std::vector<std::int64_t> taps;  // per step (quad, kernel row[, kernel column]): its offset in the packed band
  std::int64_t out_plane = 0;
  std::int64_t second_row = 0;     // two-row vectors: lanes kLanes / 2 on read this far past the first half's
  Requantization requantize;
  std::vector<std::int32_t> compensation;  // zp * sum of each output channel's weights
};

// A vector of two output rows of kLanes / 2 columns: the first half's lanes from p, the second's
// from p + second (the next packed row, less the half).
inline IVec load_two_rows(const std::int32_t* p, std::int64_t second) {
#if defined(__AVX512BW__)  // as IVec: 16 lanes (int8_simd.hpp)
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + second + kLanes / 2)), 1);
#else  // portable: two_rows_ asks for 16 lanes, but every build compiles the two-row tiles
  alignas(64) std::int32_t lanes[kLanes];
  std::memcpy(lanes, p, sizeof lanes / 2);
  std::memcpy(lanes + kLanes / 2, p + second + kLanes / 2, sizeof lanes / 2);
  return load(lanes);
#endif
}

// kV vectors x kChannels channels from k0 (channels of them real), requantised and stored.
template <bool kSevenBit, bool kTwoRows, int kV>
void tile(const std::int32_t* band, const std::int32_t* w, const Geometry& g, const PixelVector* vectors,
          std::int64_t k0, std::int64_t channels, std::uint8_t* out) {
  // The accumulators start at minus the zero point's term (exact in int32): no subtraction after.
  IVec acc[kChannels][kV];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
  CONVLAB_TILE_LOOP
  for (int k = 0; k < kChannels; ++k) {
    const IVec start = splat(-g.compensation[static_cast<std::size_t>(k0 + k)]);  // k_padded_ entries
    CONVLAB_TILE_LOOP
    for (IVec& a : acc[k]) a = start;
  }
  const std::int32_t* in[kV];
  for (int v = 0; v < kV; ++v) in[v] = band + vectors[v].in_offset;
  for (const std::int64_t tap : g.taps) {
    IVec x[kV];
    CONVLAB_TILE_LOOP
    for (int v = 0; v < kV; ++v) {
      x[v] = kTwoRows ? load_two_rows(in[v] + tap, g.second_row) : load(in[v] + tap);
      keep_in_register(x[v]);  // loaded once, used kChannels times
    }
    CONVLAB_TILE_LOOP
    for (int k = 0; k < kChannels; ++k) {
      const IVec wk = splat(w[k]);
      CONVLAB_TILE_LOOP
      for (int v = 0; v < kV; ++v) acc[k][v] = dot4<kSevenBit>(acc[k][v], x[v], wk);
    }
    w += kChannels;
  }
  const Requantization& rq = g.requantize;
  const IVec zp = splat(rq.zero_point), lo = splat(rq.lo), hi = splat(rq.hi);
  // Most tiles: every channel real, each vector one whole store. Those take a path with no
  // segment loop (its loads and branches cost as much as the requantisation; on a first layer the
  // epilogue outweighs the vpdpbusd), unrolled (2-3% more on lab-cnn's conv1 and conv2).
  bool whole = channels >= kChannels;
  for (int v = 0; v < kV; ++v) whole = whole && vectors[v].whole();
  if (whole) {
#pragma GCC unroll 8
    for (int k = 0; k < kChannels; ++k) {
      const float m = rq.multiplier[static_cast<std::size_t>(k0 + k)], o = rq.offset[static_cast<std::size_t>(k0 + k)];
      std::uint8_t* plane = out + (k0 + k) * g.out_plane;
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v)
        store_bytes(requantize_channel(acc[k][v], m, o, zp, lo, hi), 0, kLanes, plane + vectors[v].segment[0].out_offset);
    }
    return;
  }
  // The rest (a last group of fewer channels, vectors split over rows): requantised into a copy
  // first, in loops of constant count, and stored segment by segment from the copy. Stored from the
  // tile itself, by loops over run-time counts, the tile was kept on the stack by GCC, every tile
  // stored there after its last vpdpbusd and loaded back, whichever path it took.
  IVec q[kChannels][kV];
#pragma GCC unroll 8
  for (int k = 0; k < kChannels; ++k) {  // past `channels`: multiplier and offset 0 (k_padded_ entries)
    const float m = rq.multiplier[static_cast<std::size_t>(k0 + k)], o = rq.offset[static_cast<std::size_t>(k0 + k)];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) q[k][v] = requantize_channel(acc[k][v], m, o, zp, lo, hi);
  }
  for (int k = 0; k < std::min<int>(kChannels, static_cast<int>(channels)); ++k)
    for (int v = 0; v < kV; ++v)
      for (int s = 0; s < vectors[v].segments; ++s) {
        const Segment& seg = vectors[v].segment[s];
        store_bytes(q[k][v], seg.from, seg.count, out + (k0 + k) * g.out_plane + seg.out_offset);
      }
}

// kTiles<kSevenBit, kTwoRows>[vectors - 1]: a tile of 1..kVectors vectors (a band's last tile may be short).
template <bool kSevenBit, bool kTwoRows>
constexpr auto kTiles = []<std::size_t... kV>(std::index_sequence<kV...>) {
  return std::array{&tile<kSevenBit, kTwoRows, static_cast<int>(kV) + 1>...};
}(std::make_index_sequence<kVectors>());

class Int8RowsConv final : public PlannedInt8Conv {
 public:
  Int8RowsConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e, int threads)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), threads_(threads), k_padded_(ceil_div(p.k, kChannels) * kChannels),
        input_zero_point_(static_cast<std::uint8_t>(w.input.zero_point)) {
    // Quads over (channel, kernel column) where that takes fewer steps, or the row has a stride;
    // else over four channels at each tap.
    fold_columns_ = p.stride_w > 1 || ceil_div(p.c * p.s, 4) < p.s * ceil_div(p.c, 4);
    const std::int64_t slots = fold_columns_ ? p.c * p.s : p.c;
    quads_ = ceil_div(slots, 4);
    // A packed row: every output column (folded), or the input row and its padding, a row's right
    // padding shared with the next row's left (the larger of the two, a junk column fewer per row:
    // 56 x 56 maps 58 -> 57 lanes a row; the words read past a row's end are the next row's left
    // padding, or, after a plane's last row, words pack_channel_quads writes).
    row_words_ = fold_columns_ ? ow_ : std::max(ow_, p.w + std::max(p.pad_w, p.pad_right()));
    unpadded_pointwise_ = p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && !p.has_padding();
    // One kernel row: only every stride_h-th input row is read, so only those are packed (a 1 x 1
    // stride-2 shortcut packed twice the rows it used, and read them as strided vectors).
    row_step_ = p.r == 1 ? p.stride_h : 1;
    packed_stride_ = p.stride_h / row_step_;
    choose_bands();
    // Rows of half a vector with junk columns after them (8 x 8 maps: 9 lanes a row, a flat run
    // of 8 rows 5 vectors): each vector two rows, its halves loaded apart, 4 vectors, no junk.
    two_rows_ = kLanes == 16 && !fold_columns_ && packed_stride_ == 1 && 2 * ow_ == kLanes && row_words_ > ow_;
    g_.second_row = row_words_ - ow_;
    vectors_ = band_vectors(band_rows_);
    last_vectors_ = band_vectors(oh_ - (bands_ - 1) * band_rows_);
    const std::int64_t plane = in_rows_ * row_words_, steps_per_quad = fold_columns_ ? p.r : p.r * p.s;
    for (std::int64_t q = 0; q < quads_; ++q)
      for (std::int64_t r = 0; r < p.r; ++r)
        for (std::int64_t s = 0; s < (fold_columns_ ? 1 : p.s); ++s)
          g_.taps.push_back(q * plane + r * p.dilation_h * row_words_ + s * p.dilation_w);
    g_.out_plane = oh_ * ow_;
    // Weights: [K / kChannels][step][kChannels] words, each the quad's four s8 weights (0 for a
    // slot past the channels), and the compensation zp * sum w per output channel.
    const std::int64_t steps = quads_ * steps_per_quad;
    weights_.assign(static_cast<std::size_t>(k_padded_ * steps), 0);
    g_.compensation.assign(static_cast<std::size_t>(k_padded_), 0);
    auto* bytes = reinterpret_cast<std::int8_t*>(weights_.data());
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t c = 0; c < p.c; ++c)
        for (std::int64_t r = 0; r < p.r; ++r)
          for (std::int64_t s = 0; s < p.s; ++s) {
            const std::int64_t slot = fold_columns_ ? c * p.s + s : c, q = slot / 4;
            const std::int64_t step = (q * p.r + r) * (fold_columns_ ? 1 : p.s) + (fold_columns_ ? 0 : s);
            const std::int8_t v = w.weight[static_cast<std::size_t>(((k * p.c + c) * p.r + r) * p.s + s)];
            bytes[((k / kChannels * steps + step) * kChannels + k % kChannels) * 4 + slot % 4] = v;
            g_.compensation[static_cast<std::size_t>(k)] += w.input.zero_point * v;
          }
    g_.requantize = make_requantization(w, p.k, e.activation);
    g_.requantize.multiplier.resize(static_cast<std::size_t>(k_padded_), 0.0f);
    g_.requantize.offset.resize(static_cast<std::size_t>(k_padded_), 0.0f);
  }

  std::size_t weight_bytes() const override {
    return (weights_.size() + g_.compensation.size() + 2 * g_.requantize.multiplier.size()) * 4;
  }
  // Per thread: the band's zero-point-padded input rows (bytes) and their packed quads (words).
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(threads_ * thread_bytes()) + 64;
  }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    const std::int64_t items = p_.n * bands_ * chunks_, groups = k_padded_ / kChannels;
    auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(workspace) + 63) / 64 * 64);
    const std::uint8_t* input_end = input + p_.input_elems();
    const bool seven_bit = seven_bit_input(input, p_.input_elems(), input_zero_point_);
#pragma omp parallel num_threads(threads_)
    {
      std::uint8_t* rows = base + omp_get_thread_num() * thread_bytes();
      auto* band = reinterpret_cast<std::int32_t*>(rows + source_bytes());
      // The slack past the packed planes, read only by lanes that are not stored: zeroed once per
      // run (the packing's overruns write bytes there, never garbage).
      std::fill(band + quads_ * in_rows_ * row_words_, band + band_words(), 0);
      std::int64_t packed = -1;  // the (image, band) the buffer holds
#pragma omp for schedule(static)
      for (std::int64_t item = 0; item < items; ++item) {
        const std::int64_t image_band = item / chunks_, chunk = item % chunks_;
        const std::int64_t n = image_band / bands_, y0 = image_band % bands_ * band_rows_;
        const std::int64_t y1 = std::min(y0 + band_rows_, oh_);
        if (image_band != packed) pack_band(input + n * p_.c * p_.h * p_.w, input_end, y0, y1, rows, band);
        packed = image_band;
        run_band(band, y0, y1, chunk * groups / chunks_ * kChannels, (chunk + 1) * groups / chunks_ * kChannels,
                 output + n * p_.k * oh_ * ow_, seven_bit);
      }
    }
  }

 private:
  // Band rows: a few work items per thread (images, then bands of rows, then chunks of output
  // channels, as cpu.08), and a packed band of at most about kBandBytes.
  void choose_bands() {
    const std::int64_t vectors_per_row = ceil_div(ow_, kLanes);
    const std::int64_t wanted = ceil_div(4 * threads_, p_.n), groups = k_padded_ / kChannels;
    const std::int64_t most_bands = std::max<std::int64_t>(1, oh_ * vectors_per_row / (4 * kVectors));
    const std::int64_t row_bytes = quads_ * row_words_ * 4 * packed_stride_;
    const std::int64_t fewest_bands = ceil_div(oh_ * row_bytes, kBandBytes);
    bands_ = std::min(std::max<std::int64_t>(std::min(wanted, most_bands), fewest_bands), oh_);
    band_rows_ = ceil_div(oh_, bands_);
    bands_ = ceil_div(oh_, band_rows_);
    chunks_ = std::clamp<std::int64_t>(ceil_div(wanted, bands_), 1, groups);
    in_rows_ = (band_rows_ - 1) * packed_stride_ + (p_.r - 1) * p_.dilation_h + 1;
    // A padded source row: every byte the packing's whole vectors read (gather_quads), and at
    // least the padded input row.
    const std::int64_t columns = ceil_div(row_words_, kLanes) * kLanes;
    source_row_ = ceil_div(std::max(columns * (fold_columns_ ? p_.stride_w : 1) + (fold_columns_ ? (p_.s - 1) * p_.dilation_w : 0),
                                    p_.pad_w + p_.w), 16) * 16;
    // Where each slot of each quad reads in the padded rows (channel row, kernel column); a slot
    // past the last reads the last one's byte (its weight is 0).
    for (std::int64_t slot = 0; slot < quads_ * 4; ++slot) {
      const std::int64_t last = std::min(slot, (fold_columns_ ? p_.c * p_.s : p_.c) - 1);
      const std::int64_t c = fold_columns_ ? last / p_.s : last, s = fold_columns_ ? last % p_.s : 0;
      slot_offsets_.push_back(c * in_rows_ * source_row_ + s * p_.dilation_w);
    }
  }

  // The padded input rows the packing of (channel, kernel column) quads reads (none for channel quads).
  std::int64_t source_bytes() const {
    return fold_columns_ ? (p_.c * in_rows_ * source_row_ + kPaddedRowSlack + 63) / 64 * 64 : 0;
  }
  // Packed quads: every plane's rows, then slack for the lanes past the last row (they read a row
  // and a vector further, and the columns of the kernel).
  std::int64_t band_words() const {
    return quads_ * in_rows_ * row_words_ + row_words_ + 2 * kLanes + (p_.s - 1) * p_.dilation_w;
  }
  std::int64_t thread_bytes() const { return source_bytes() + (band_words() * 4 + 63) / 64 * 64; }

  // The input rows that output rows [y0, y1) read, padded with the zero point, then their quads.
  void pack_band(const std::uint8_t* image, const std::uint8_t* input_end, std::int64_t y0, std::int64_t y1,
                 std::uint8_t* rows, std::int32_t* band) const {
    const std::int64_t used_rows = (y1 - y0 - 1) * packed_stride_ + (p_.r - 1) * p_.dilation_h + 1;
    const std::int64_t plane = in_rows_ * row_words_, stride = fold_columns_ ? p_.stride_w : 1;
    if (unpadded_pointwise_) {
      // The band's rows are one run of pixels in each input plane, as in the packed band: its
      // quads straight from the input (no padded copy, a third of a pointwise layer's time), the
      // last few pixels one at a time so that no read passes the input's end.
      const std::int64_t pixels = (y1 - y0) * p_.w;
      for (std::int64_t q = 0; q < quads_; ++q) {
        const std::uint8_t* src[4];
        for (int j = 0; j < 4; ++j)
          src[j] = image + (std::min(q * 4 + j, p_.c - 1) * p_.h + y0) * p_.w;  // past C: weight 0
        std::int32_t* to = band + q * plane;
        std::int64_t x = 0;
        for (; x + kLanes <= pixels; x += kLanes) store(to + x, gather_quads(src, x, 1));
        for (; x < pixels; ++x) to[x] = quad_word(src, x);
      }
      return;
    }
    if (!fold_columns_) {
      pack_channel_quads(image, input_end, y0, used_rows, band);
      return;
    }
    for (std::int64_t c = 0; c < p_.c; ++c)
      for (std::int64_t b = 0; b < used_rows; ++b) {
        const std::int64_t y = y0 * p_.stride_h - p_.pad_h + b * row_step_;
        copy_padded_row(rows + (c * in_rows_ + b) * source_row_, source_row_,
                        y < 0 || y >= p_.h ? nullptr : image + (c * p_.h + y) * p_.w, p_.w, p_.pad_w, input_zero_point_);
      }
    for (std::int64_t q = 0; q < quads_; ++q)
      for (std::int64_t b = 0; b < used_rows; ++b) {
        const std::uint8_t* src[4];
        for (int j = 0; j < 4; ++j) src[j] = rows + b * source_row_ + slot_offsets_[static_cast<std::size_t>(q * 4 + j)];
        std::int32_t* to = band + q * plane + b * row_words_;
        // Vectors in order: each one's tail past the row is overwritten by the next row.
        for (std::int64_t x = 0; x < row_words_; x += kLanes) store(to + x, gather_quads(src, x, stride));
      }
  }

  // Quads of four channels at each padded input column, straight from the input rows: the zero
  // point written as whole words around them, no padded copy (it took a third of the time of a
  // layer of 16 x 16 maps). Each row's vectors may run past its end, into words written after
  // them (the right padding, the next row); only a vector that would read past the input's end is
  // done one pixel at a time.
  void pack_channel_quads(const std::uint8_t* image, const std::uint8_t* input_end, std::int64_t y0,
                          std::int64_t used_rows, std::int32_t* band) const {
    const auto zp4 = static_cast<std::int32_t>(std::uint32_t{input_zero_point_} * 0x01010101u);
    const std::int64_t plane = in_rows_ * row_words_;
    for (std::int64_t q = 0; q < quads_; ++q) {
      for (std::int64_t b = 0; b < used_rows; ++b) {
        std::int32_t* to = band + q * plane + b * row_words_;
        const std::int64_t y = y0 * p_.stride_h - p_.pad_h + b * row_step_;
        if (y < 0 || y >= p_.h) {
          std::fill(to, to + row_words_, zp4);
          continue;
        }
        std::fill(to, to + p_.pad_w, zp4);
        const std::uint8_t* src[4];
        for (int j = 0; j < 4; ++j) src[j] = image + (std::min(q * 4 + j, p_.c - 1) * p_.h + y) * p_.w;  // past C: weight 0
        std::int32_t* pixels = to + p_.pad_w;
        std::int64_t x = 0;
        for (; x < p_.w && (x + kLanes <= p_.w || src[3] + x + kLanes <= input_end); x += kLanes)
          store(pixels + x, gather_quads(src, x, 1));
        for (; x < p_.w; ++x) pixels[x] = quad_word(src, x);
        std::fill(to + p_.pad_w + p_.w, to + row_words_, zp4);
      }
      // The last row's right padding reads on as far as a row's left padding: the zero point
      // there too (after the vectors' overruns).
      std::int32_t* after = band + q * plane + used_rows * row_words_;
      std::fill(after, after + p_.pad_w, zp4);
    }
  }

  // Output rows [y0, y1) and channels [k_begin, k_end) of one image: the band's pixel vectors in
  // tiles of kVectors, for every kChannels.
  void run_band(const std::int32_t* band, std::int64_t y0, std::int64_t y1, std::int64_t k_begin,
                std::int64_t k_end, std::uint8_t* out, bool seven_bit) const {
    const std::vector<PixelVector>& v = y1 - y0 == band_rows_ ? vectors_ : last_vectors_;
    const auto vectors = static_cast<std::int64_t>(v.size());
    const std::int64_t steps = static_cast<std::int64_t>(g_.taps.size());
    const int per_tile = seven_bit ? kSevenBitVectors : kVectors;
    const auto& tiles = seven_bit ? (two_rows_ ? kTiles<true, true> : kTiles<true, false>)
                                  : (two_rows_ ? kTiles<false, true> : kTiles<false, false>);
    for (std::int64_t first = 0; first < vectors; first += per_tile) {
      const int count = static_cast<int>(std::min<std::int64_t>(per_tile, vectors - first));
      for (std::int64_t k0 = k_begin; k0 < std::min(k_end, p_.k); k0 += kChannels)
        tiles[count - 1](band, weights_.data() + k0 * steps, g_, &v[first], k0, p_.k - k0, out + y0 * ow_);
    }
  }

  // The pixel vectors of a band of `rows` output rows, their output offsets from the band's first
  // row: made in plan for the two band heights, as the divisions per vector per band took a sixth
  // of a first layer's time (mb32ic3ih32oc16oh32kh3ph1).
  std::vector<PixelVector> band_vectors(std::int64_t rows) const {
    if (two_rows_) {
      std::vector<PixelVector> vectors(static_cast<std::size_t>(ceil_div(rows, 2)));
      for (std::size_t i = 0; i < vectors.size(); ++i) {
        const auto row = 2 * static_cast<std::int64_t>(i);
        vectors[i].in_offset = row * row_words_;
        vectors[i].segments = 1;
        vectors[i].segment[0] = {0, static_cast<int>(std::min<std::int64_t>(2, rows - row) * ow_), row * ow_};
      }
      return vectors;
    }
    const std::int64_t per_row = ceil_div(ow_, kLanes);
    const bool flat = packed_stride_ == 1 && row_words_ >= 8 && ceil_div(rows * row_words_, kLanes) < rows * per_row;
    std::vector<PixelVector> vectors(static_cast<std::size_t>(flat ? ceil_div(rows * row_words_, kLanes) : rows * per_row));
    for (std::size_t i = 0; i < vectors.size(); ++i) {
      const auto at = static_cast<std::int64_t>(i);
      flat ? flat_vector(at, rows, vectors[i]) : row_vector(at, per_row, vectors[i]);
    }
    return vectors;
  }

  // Vector i of a band whose rows each start a vector: one segment.
  void row_vector(std::int64_t i, std::int64_t per_row, PixelVector& v) const {
    const std::int64_t row = i / per_row, x = i % per_row * kLanes;
    v.in_offset = row * packed_stride_ * row_words_ + x;
    v.segments = 1;
    v.segment[0] = {0, static_cast<int>(std::min<std::int64_t>(kLanes, ow_ - x)), row * ow_ + x};
  }

  // Vector i of a band read as one run of row_words_-wide rows: a segment per row it meets.
  void flat_vector(std::int64_t i, std::int64_t rows, PixelVector& v) const {
    v.in_offset = i * kLanes;
    v.segments = 0;
    for (std::int64_t at = i * kLanes; at < (i + 1) * kLanes;) {
      const std::int64_t row = at / row_words_, x = at % row_words_, row_end = (row + 1) * row_words_;
      if (row >= rows) break;
      if (x < ow_) {
        const int from = static_cast<int>(at - i * kLanes), count = static_cast<int>(std::min({ow_ - x, (i + 1) * kLanes - at}));
        const std::int64_t out = row * ow_ + x;
        Segment* last = v.segments > 0 ? &v.segment[v.segments - 1] : nullptr;
        if (last != nullptr && last->from + last->count == from && last->out_offset + last->count == out) {
          last->count += count;  // rows with no junk columns between them: one store
        } else {
          v.segment[v.segments++] = {from, count, out};
        }
      }
      at = row_end;
    }
  }

  ConvProblem p_;
  std::int64_t oh_, ow_;
  int threads_;
  std::int64_t k_padded_;
  std::uint8_t input_zero_point_;
  bool fold_columns_ = false;
  bool unpadded_pointwise_ = false;  // 1 x 1, stride 1, no padding: quads packed straight from the input
  bool two_rows_ = false;            // vectors of two output rows (band_vectors)
  std::int64_t row_step_ = 1;      // input rows from one packed row to the next (stride_h for 1 x 1 kernels)
  std::int64_t packed_stride_ = 1; // packed rows from one output row to the next
  std::int64_t quads_ = 0, row_words_ = 0, bands_ = 1, band_rows_ = 1, chunks_ = 1, in_rows_ = 1, source_row_ = 0;
  std::vector<std::int64_t> slot_offsets_;  // per quad and byte: its offset in the padded rows
  std::vector<PixelVector> vectors_, last_vectors_;  // of a band of band_rows_, and of the last band
  Geometry g_;
  std::vector<std::int32_t> weights_;  // quads of s8 weights, see the constructor
};

}  // namespace

std::string int8_direct_rows_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return fmt::format("groups 1 only, got g{} (depthwise int8 is cpu.22 and cpu.25)", p.groups);
  return {};
}

std::unique_ptr<PlannedInt8Conv> int8_direct_rows_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_direct_rows_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.24_int8_direct_rows cannot run {}: {}", to_string(p), why));
  return std::make_unique<Int8RowsConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
