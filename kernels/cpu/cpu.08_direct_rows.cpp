// cpu.08_direct_rows: direct convolution along NCHW output rows, with no layout change.
//
// What changes against cpu.02_direct_xsimd: a vector holds `block` neighbouring output pixels of
//   one channel's row (cpu.07's idea, for groups 1); the tile is kChannels output channels x
//   kVectors such vectors, the weights broadcast. Per tap: kVectors unaligned loads, kChannels
//   broadcasts, kChannels x kVectors FMAs; each result vector is stored straight into its NCHW
//   row: no NCHWc reorder, no transposed epilogue, only a zero-padded copy of the rows read.
// Why faster (where it is): when C x R x S is short (C = 3: 27 taps, the first layers) cpu.02's
//   epilogue, a transpose of every tile through L1 into NCHW, costs about as much as its FMAs;
//   here it is a store per vector. On long reductions the two tie (76% of the FMA peak on
//   mb32ic64ih56oc64oh56kh3ph1, AVX2); cpu.auto measures it per layer.
// Tile: 4 x 3 with 16 vector registers (AVX2, SSE2), 4 x 6 with 32 (AVX-512, NEON). A tile's
//   vectors may lie on different rows (each has its own offset), so 8 x 8 maps fill it too; a
//   row's last vector may be partial (its extra lanes read zeros and are not stored).
// Stride 2 across: the copied rows are split into even and odd phases (layout.hpp), a tap column
//   j is phase j % 2, j / 2 floats on. Limits: groups 1, stride across <= 2; any padding, dilation.
// Measured: C = 3 first layers (mb32ic3ih32oc16oh32kh3ph1) 1.17-1.22x oneDNN where cpu.02 reached
//   0.89-0.92x; 8 x 8 maps (mb32ic64ih8oc64oh8kh3ph1) 0.89x, cpu.02 0.80x (2-core Zen 2 VM, AVX2,
//   interleaved, median of three runs). Stride 2, C = 3 at 224 x 224 (Zen 3): 3 x 3 batch 1 1.32x
//   (cpu.02 0.92x), 7 x 7 0.98x (0.85x); batch 32, in bands of kBandBytes, 1.14x and 1.01x.
//   Zen 5: its tile in GCC's registers, not the stack (tile_loop.hpp), 0.87 -> 0.78 of oneDNN's time.
// Run: build/convlab conv --problem mb32ic3ih32oc16oh32kh3ph1 --kernel cpu.02_direct_xsimd,cpu.08_direct_rows,onednn.conv --interleave
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

constexpr int kChannels = 4;                              // output channels per tile
constexpr int kVectors = kVectorRegisters == 32 ? 6 : 3;  // output vectors per tile
// The most a band's padded copy may take: a whole 224 x 224 image's (650 KiB, over a Zen 3 L2)
// was read back from L3 after the output lines streaming past had pushed it out of L2. Bands of
// 32-128 KiB measured alike: mobilenet-v2's first layer at batch 32 7.5 -> 6.6 ms (Zen 3).
constexpr std::int64_t kBandBytes = 64 << 10;

// A band of output rows and the padded copy of the input rows it reads.
struct BandGeometry {
  std::vector<std::int64_t> taps;  // per (c, r, s): its offset in the band's padded copy
  std::int64_t row_floats;    // a padded input row: every vector of an output row, and its taps
  std::int64_t phase_floats;  // at stride 2 a row is two phases, its even and odd columns
  std::int64_t plane_floats;  // one channel's rows of the band
  std::int64_t out_w, out_plane, vectors_per_row;
  Activation activation;
};

// kV vectors (output pixel offsets within the band's padded rows and within the output plane) x
// kChannels channels from k0: taps summed in the order (c, r, s), bias added last.
template <int kV>
void tile(const float* band, const float* w, const float* bias, const BandGeometry& g, const std::int64_t* in_offsets,
          const std::int64_t* out_offsets, const std::int64_t* valid, float* out, std::int64_t channels) {
  Vec acc[kChannels][kV];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
  CONVLAB_TILE_LOOP_GCC_TOO
  for (auto& row : acc) {
    CONVLAB_TILE_LOOP_GCC_TOO
    for (Vec& a : row) a = Vec(0.0f);
  }
  // One loop over every tap (the offsets plan made), so the accumulators stay in registers;
  // unrolled by 3 (a kernel row), its counter and branch come every 36 FMAs, not 12: 0.91x -> 0.95x
  // oneDNN on mb32ic64ih56oc64oh56kh3ph1 (Zen 2, AVX2; by 2, 4 or 9 measured the same).
  const float* in[kV];
  for (int v = 0; v < kV; ++v) in[v] = band + in_offsets[v];
#pragma GCC unroll 3
  for (const std::int64_t tap : g.taps) {
    Vec x[kV];
    CONVLAB_TILE_LOOP
    for (int v = 0; v < kV; ++v) {
      x[v] = Vec::load_unaligned(in[v] + tap);
      keep_in_register(x[v]);  // loaded once, used kChannels times
    }
    CONVLAB_TILE_LOOP
    for (int k = 0; k < kChannels; ++k) {
      const Vec wv(w[k]);
      CONVLAB_TILE_LOOP
      for (int v = 0; v < kV; ++v) acc[k][v] = xsimd::fma(x[v], wv, acc[k][v]);
    }
    w += kChannels;
  }
  CONVLAB_TILE_LOOP_GCC_TOO
  for (int k = 0; k < kChannels; ++k) {
    if (k >= channels) break;  // not in the loop's condition: its count stays a constant (tile_loop.hpp)
    CONVLAB_TILE_LOOP_GCC_TOO
    for (int v = 0; v < kV; ++v) {
      const Vec y = activate_vec(g.activation, acc[k][v] + Vec(bias[k]));
      float* to = out + k * g.out_plane + out_offsets[v];
      if (valid[v] == kBlock) y.store_unaligned(to);
      else store_first(to, y, valid[v]);
    }
  }
}

// kTiles[vectors - 1]: a tile of 1..kVectors vectors (a band's last tile may be short).
constexpr auto kTiles = []<std::size_t... kV>(std::index_sequence<kV...>) {
  return std::array{&tile<static_cast<int>(kV) + 1>...};
}(std::make_index_sequence<kVectors>());

class DirectRowsConv final : public PlannedConv {
 public:
  DirectRowsConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads)
      : p_(p),
        threads_(threads),
        prefetch_output_(prefetch_output_pays(p)),
        k_padded_((p.k + kChannels - 1) / kChannels * kChannels) {
    const std::int64_t vectors_per_row = (p.out_w() + kBlock - 1) / kBlock;
    // A phase holds every vector of an output row and its taps (and at stride 2 its half of the
    // input row): tap column j is phase j % stride, j / stride floats on.
    const std::int64_t sw = p.stride_w, span = (p.s - 1) * p.dilation_w;
    std::int64_t phase_floats = vectors_per_row * kBlock + span / sw;
    if (sw == 2) phase_floats = std::max(phase_floats, (p.pad_w + p.w + 1) / 2);
    const std::int64_t row_floats = sw * phase_floats;
    // Work items (image, band of rows, chunk of output channels): a few per thread. At batch 1
    // bands of rows while each keeps several tiles of vectors, then chunks of channels (a small
    // plane has too few vectors to split). At batch 32 whole images, unless an image's copy is over
    // kBandBytes: then bands within it (only there, as more bands at batch 1 would unbalance the
    // threads: 13 bands on 2 threads cost resnet18's conv1 12%).
    const std::int64_t wanted = (4 * threads + p.n - 1) / p.n, groups = k_padded_ / kChannels;
    const std::int64_t halo = (p.r - 1) * p.dilation_h;  // input rows a band reads past its own
    std::int64_t bands = wanted;
    if (wanted == 1) {
      const std::int64_t rows_in_budget = kBandBytes / static_cast<std::int64_t>(sizeof(float) * p.c * row_floats);
      const std::int64_t band_rows = std::max<std::int64_t>(1, (rows_in_budget - halo - 1) / p.stride_h + 1);
      bands = (p.out_h() + band_rows - 1) / band_rows;
    }
    const std::int64_t most_bands = std::max<std::int64_t>(1, p.out_h() * vectors_per_row / (4 * kVectors));
    bands_ = std::clamp<std::int64_t>(bands, 1, std::min(most_bands, p.out_h()));
    band_rows_ = (p.out_h() + bands_ - 1) / bands_;
    bands_ = (p.out_h() + band_rows_ - 1) / band_rows_;
    chunks_ = std::clamp<std::int64_t>((wanted + bands_ - 1) / bands_, 1, groups);
    in_rows_ = (band_rows_ - 1) * p.stride_h + halo + 1;
    g_ = {{}, row_floats, phase_floats, in_rows_ * row_floats, p.out_w(), p.out_h() * p.out_w(), vectors_per_row,
          e.activation};
    for (std::int64_t c = 0; c < p.c; ++c)
      for (std::int64_t r = 0; r < p.r; ++r)
        for (std::int64_t s = 0; s < p.s; ++s) {
          const std::int64_t column = s * p.dilation_w;
          g_.taps.push_back(c * g_.plane_floats + r * p.dilation_h * row_floats + column % sw * phase_floats +
                            column / sw);
        }
    // [K / kChannels][C][R][S][kChannels], channels past K zero.
    const std::int64_t taps = p.c * p.r * p.s;
    weights_ = aligned_floats(static_cast<std::size_t>(k_padded_ * taps));
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t t = 0; t < taps; ++t)
        weights_[static_cast<std::size_t>((k / kChannels * taps + t) * kChannels + k % kChannels)] =
            w.weight[static_cast<std::size_t>(k * taps + t)];
    bias_ = aligned_floats(static_cast<std::size_t>(k_padded_));  // zeroed: no bias
    std::ranges::copy(w.bias, bias_.get());
  }

  // One band's padded rows per thread, + a vector of slack past the last row, + alignment slack.
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(threads_ * buffer_floats()) * sizeof(float) + Tensor::kAlignment;
  }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(k_padded_ * (p_.c * p_.r * p_.s + 1)) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    const std::int64_t items = p_.n * bands_ * chunks_, groups = k_padded_ / kChannels;
#pragma omp parallel num_threads(threads_)
    {
      float* band = aligned_workspace(workspace) + omp_get_thread_num() * buffer_floats();
      std::int64_t copied = -1;  // the (image, band) the buffer holds
#pragma omp for schedule(static)
      for (std::int64_t item = 0; item < items; ++item) {
        const std::int64_t image_band = item / chunks_, chunk = item % chunks_;
        const std::int64_t n = image_band / bands_, y0 = image_band % bands_ * band_rows_;
        if (image_band != copied) copy_band(input + n * p_.c * p_.h * p_.w, y0, band);
        copied = image_band;
        run_band(band, y0, std::min(y0 + band_rows_, p_.out_h()), chunk * groups / chunks_ * kChannels,
                 (chunk + 1) * groups / chunks_ * kChannels, output + n * p_.k * g_.out_plane);
      }
    }
  }

 private:
  std::int64_t buffer_floats() const { return (p_.c * g_.plane_floats + kBlock + 15) / 16 * 16; }

  // The input rows output rows [y0, y0 + band_rows_) read, every channel, zero-padded (at
  // stride 2 each row split into its phases, split_row_phases).
  void copy_band(const float* image, std::int64_t y0, float* band) const {
    std::fill_n(band, buffer_floats(), 0.0f);
    const std::int64_t columns = std::min(p_.w, g_.row_floats - p_.pad_w);
    for (std::int64_t c = 0; c < p_.c; ++c)
      for (std::int64_t b = 0; b < in_rows_; ++b) {
        const std::int64_t y = y0 * p_.stride_h - p_.pad_h + b;
        if (y < 0 || y >= p_.h || columns <= 0) continue;
        const float* row = image + (c * p_.h + y) * p_.w;
        float* to = band + c * g_.plane_floats + b * g_.row_floats;
        if (p_.stride_w == 1) std::copy_n(row, columns, to + p_.pad_w);
        else split_row_phases(row, p_.w, p_.pad_w, g_.phase_floats, to);
      }
  }

  // Output rows [y0, y1) and channels [k_begin, k_end) of one image: the band's vectors in tiles
  // of kVectors, for every kChannels.
  void run_band(const float* band, std::int64_t y0, std::int64_t y1, std::int64_t k_begin, std::int64_t k_end,
                float* out) const {
    const std::int64_t vectors = (y1 - y0) * g_.vectors_per_row, taps = p_.c * p_.r * p_.s;
    for (std::int64_t first = 0; first < vectors; first += kVectors) {
      const int count = static_cast<int>(std::min<std::int64_t>(kVectors, vectors - first));
      std::int64_t in_offsets[kVectors], out_offsets[kVectors], valid[kVectors];
      for (int v = 0; v < count; ++v) {
        const std::int64_t row = (first + v) / g_.vectors_per_row, x = (first + v) % g_.vectors_per_row * kBlock;
        in_offsets[v] = row * p_.stride_h * g_.row_floats + x;
        out_offsets[v] = (y0 + row) * g_.out_w + x;
        valid[v] = std::min<std::int64_t>(kBlock, g_.out_w - x);
      }
      if (prefetch_output_ && first + kVectors < vectors)
        prefetch_tile_output(out, y0, first + kVectors, std::min(k_end, p_.k) - k_begin, k_begin);
      for (std::int64_t k0 = k_begin; k0 < std::min(k_end, p_.k); k0 += kChannels)
        kTiles[count - 1](band, weights_.get() + k0 * taps, bias_.get() + k0, g_, in_offsets, out_offsets, valid,
                          out + k0 * g_.out_plane, p_.k - k0);
    }
  }

  // The output lines of the tile starting at vector `first` of the band (from output row y0), in
  // `channels` channels from k_begin, asked for one tile ahead: without it each first store to a
  // line waits for its read for ownership. mobilenet-v2's first layer at batch 32 (51 MB of output):
  // 0.82x -> 0.95-1.02x oneDNN (Zen 3, three runs each); at batch 1 within the noise. Not
  // prefetch_output_row (microkernel.hpp): with it (one more prefetch per channel) 0.84x, and with
  // a loop over the tile's aligned lines (the same lines as here) 0.81x; not understood.
  // Inlined always: GCC 12 counts a function of prefetches alone as free of side effects and drops
  // its calls, which it did here in the Zen 5 builds until 2026-12-07 (no prefetch in the object).
  // Emitted, on that Zen 5 VM it moved nothing beyond the noise (the first layers and two 32 x 32
  // layers, batch 1 and 32, four alternating rounds: 0.648 -> 0.659 of oneDNN's time, geometric mean).
  [[gnu::always_inline]] void prefetch_tile_output(const float* out, std::int64_t y0, std::int64_t first,
                                                   std::int64_t channels, std::int64_t k_begin) const {
    const float* at = out + (y0 + first / g_.vectors_per_row) * g_.out_w + first % g_.vectors_per_row * kBlock;
    for (std::int64_t k = k_begin; k < k_begin + channels; ++k) {
      const float* plane = at + k * g_.out_plane;
      for (std::int64_t f = 0; f < kVectors * kBlock - 16; f += 16) __builtin_prefetch(plane + f, 1, 3);
      __builtin_prefetch(plane + kVectors * kBlock - 1, 1, 3);
    }
  }

  ConvProblem p_;
  int threads_;
  bool prefetch_output_ = false;  // prefetch_output_pays
  std::int64_t k_padded_, bands_ = 1, band_rows_ = 1, in_rows_ = 1, chunks_ = 1;
  BandGeometry g_{};
  std::unique_ptr<float[], detail::AlignedFree> weights_, bias_;
};

}  // namespace

std::string direct_rows_unsupported(const ConvProblem& p) {
  if (p.groups != 1) return fmt::format("groups 1 only, got g{}", p.groups);
  if (p.stride_w > 2) return fmt::format("stride across 1 or 2 only, got sw{}", p.stride_w);
  return {};
}

std::unique_ptr<PlannedConv> direct_rows_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  if (std::string why = direct_rows_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.08_direct_rows does not support {}: {}", to_string(p), why));
  check_weights(p, w);
  return std::make_unique<DirectRowsConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
