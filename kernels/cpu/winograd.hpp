// Winograd minimal filtering F(m x m, 3 x 3), shared by cpu.03 (m = 2) and cpu.04 (m = 4).
//
// Output tiles of m x m are computed from input tiles of a x a (a = m + 2) as
//   Y = A^T [ sum_c (G g_kc G^T) .* (B^T d_c B) ] A
// so the C x 9 multiplies per output of direct convolution become C x a^2 / m^2 multiplies
// (4 for F(2x2, 3x3), 2.25 for F(4x4, 3x3)) plus the transforms. Per image, the input is
// reordered to padded NCHWc (kernels/cpu/layout.hpp) so that every transform works on vectors of
// `block` channels; then per chunk of tiles (sized so its V and M stay in L2, or where U is larger
// than L2, so that enough tiles share each read of U; with whole images per thread, the tiles of a
// group of images when one image has too few to fill the GEMMs' register tiles and reuse their
// weights, e.g. 16 tiles of F(2x2) or 4 of F(4x4) on an 8 x 8 layer) a thread:
//   1. transforms the input tiles: V[xi][c / block][t][c % block] = (B^T d B)[xi] (xi: one of the
//      a^2 points);
//   2. multiplies, for each xi, M[xi] (T x K) = V[xi] (T x C) * U[xi] (C x K): a^2 independent
//      GEMMs over the channels, on cpu.02's register tile (microkernel.hpp) with the tiles in
//      place of pixels and U packed as [xi][K/block][C][block] in plan, so nothing is repacked;
//   3. transforms back, Y = A^T M A, adds the bias, applies the activation and writes NCHW.
// The transforms are unrolled over the constant matrices, so zero coefficients cost nothing and
// +-1 ones are plain adds. U = G g G^T is computed in plan, in double, rounded once.
// Determinism: the chunks are fixed by the problem, not the thread count, and each chunk is done
// by one thread in a fixed order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <xsimd/xsimd.hpp>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab::cpu::winograd {

// "" when Winograd F(., 3x3) supports the problem. Padding may be anything: tiles read zeros.
std::string unsupported(const ConvProblem& p);

// One GEMM tile: M rows of kTile Winograd tiles x kKBlocks blocks of output channels, stored raw.
template <int kTile, int kKBlocks>
void gemm_tile(const float* v, const float* u, const TileGeometry& g, float* m, std::int64_t m_row) {
  Vec acc[kKBlocks][kTile];
  accumulate<kTile, kKBlocks, 1, 1>(acc, v, u, g);
  CONVLAB_TILE_LOOP_GCC_TOO
  for (int kb = 0; kb < kKBlocks; ++kb)
    CONVLAB_TILE_LOOP_GCC_TOO
    for (int x = 0; x < kTile; ++x) acc[kb][x].store_aligned(m + x * m_row + kb * kBlock);
}
inline constexpr auto kGemmTiles = tile_table([]<int kW, int kKB>() { return &gemm_tile<kW, kKB>; });

// sum_l coef[l] * x(l) over the nonzero coefficients, unrolled: coef is a constant matrix row.
template <int kN, class X>
inline Vec combine(const double (&coef)[kN], X x) {
  Vec sum(0.0f);
  bool first = true;
#pragma GCC unroll 8
  for (int l = 0; l < kN; ++l) {
    if (coef[l] == 0) continue;
    const Vec term = coef[l] == 1 ? x(l) : coef[l] == -1 ? -x(l) : Vec(static_cast<float>(coef[l])) * x(l);
    sum = first ? term : sum + term;
    first = false;
  }
  return sum;
}

// F: the transform matrices of one F(m x m, 3 x 3): static constexpr int m, a; double bt[a][a]
// (B^T), g[a][3] (G), at[m][a] (A^T).
template <class F>
class WinogradConv final : public PlannedConv {
  static constexpr int m = F::m, a = F::a;

 public:
  WinogradConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads)
      : p_(p), e_(e), threads_(threads), by_image_(shares_whole_images(p.n, threads)),
        tiles_h_((p.out_h() + m - 1) / m), tiles_w_((p.out_w() + m - 1) / m),
        c_pad_(round_up(p.c)), k_pad_(round_up(p.k)),
        image_{.channels = p.c, .height = p.h, .width = p.w, .pad_h = p.pad_h, .pad_w = p.pad_w, .block = kBlock,
               .extra_h = p.padded_h() - p.h - 2 * p.pad_h + tiles_h_ * m - p.out_h(),
               .extra_w = p.padded_w() - p.w - 2 * p.pad_w + tiles_w_ * m - p.out_w(),
               .prefetch_rows = prefetch_input_rows(p, kBlock)},
        k_groups_(k_pad_ / kBlock, kMaxKBlocks),
        u_(aligned_floats(static_cast<std::size_t>(a * a * c_pad_ * k_pad_))),
        bias_(aligned_floats(static_cast<std::size_t>(k_pad_))) {
    // Tiles per chunk: V and M (a^2 x (C + K) floats per tile) within ~512 KiB of L2. Batch 1:
    // at least 4 chunks per image, so that it still feeds every thread. Whole images per thread:
    // groups of images up to that many tiles, in chunks of equal size.
    const std::int64_t tiles = tiles_h_ * tiles_w_;
    const std::int64_t l2_tiles = std::max<std::int64_t>(1, kL2Bytes / (4 * a * a * (c_pad_ + k_pad_)));
    if (by_image_) {
      const std::int64_t wanted = std::max(l2_tiles, streamed_u_tiles());
      group_ = images_per_group(p.n, threads, (wanted + tiles - 1) / tiles);
      const std::int64_t chunks = (group_ * tiles + wanted - 1) / wanted;
      chunk_tiles_ = (group_ * tiles + chunks - 1) / chunks;
    } else {
      chunk_tiles_ = std::clamp<std::int64_t>(l2_tiles, 1, std::max<std::int64_t>(1, (tiles + 3) / 4));
    }
    // U[xi][k / block][c][k % block] = (G g_kc G^T)[xi], zero for padded channels.
    std::fill(u_.get(), u_.get() + a * a * c_pad_ * k_pad_, 0.0f);
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t c = 0; c < p.c; ++c) {
        const float* g = w.weight.data() + (k * p.c + c) * 9;
        for (int i = 0; i < a; ++i)
          for (int j = 0; j < a; ++j) {
            double sum = 0;
            for (int x = 0; x < 3; ++x)
              for (int y = 0; y < 3; ++y) sum += F::g[i][x] * g[x * 3 + y] * F::g[j][y];
            u_[(((i * a + j) * k_pad_ + k - k % kBlock) * c_pad_ + c * kBlock) + k % kBlock] =
                static_cast<float>(sum);
          }
      }
    for (std::int64_t k = 0; k < k_pad_; ++k) bias_[k] = k < p.k && !w.bias.empty() ? w.bias[k] : 0.0f;
    const std::int64_t plane = p.out_h() * p.out_w();
    scatter_ = (kBlock - 1) * plane <= std::numeric_limits<std::int32_t>::max();
    for (std::int64_t kk = 0; kk < kBlock; ++kk)
      plane_offsets_[kk] = static_cast<std::int32_t>(scatter_ ? kk * plane : 0);
  }

  // The padded NCHWc image (a group per thread when they take whole images), then per thread one
  // chunk's V and M.
  std::size_t workspace_bytes() const override {
    return blocked_copies_bytes(image_, by_image_, threads_, group_) +
           static_cast<std::size_t>(threads_ * chunk_floats()) * sizeof(float);
  }
  std::size_t weight_bytes() const override { return (a * a * c_pad_ * k_pad_ + k_pad_) * sizeof(float); }

  void run(const float* input, float* output, void* workspace) const override {
    float* copies = aligned_workspace(workspace);
    float* chunks = copies + images() * image_.elems();
    const std::int64_t image_out = p_.k * p_.out_h() * p_.out_w();
    // An item is one chunk of the tiles of images [n, n + group_); each thread has its own chunk
    // scratch. The last group may have fewer images, so fewer chunks.
    for_each_blocked_image(
        input, p_.n, image_, copies, by_image_, threads_, chunks_per_item(),
        [&](std::int64_t n, const float* copy, std::int64_t chunk, int thread) {
          const std::int64_t tiles = std::min(group_, p_.n - n) * tiles_h_ * tiles_w_;
          const std::int64_t first = chunk * chunk_tiles_;
          if (first < tiles)
            run_chunk(copy, output + n * image_out, first, std::min(chunk_tiles_, tiles - first),
                      chunks + thread * chunk_floats());
        },
        group_);
  }

  std::string explain() const override {
    return fmt::format("{} tiles of {}x{} per image, chunks of up to {} tiles, {} image(s) per thread at a time",
                       tiles_h_ * tiles_w_, m, m, chunk_tiles_, by_image_ ? group_ : 1);
  }

  // The input's NCHW -> padded NCHWc reorder alone (the output transform writes NCHW directly).
  bool changes_layout() const override { return true; }
  bool effective_flops() const override { return true; }
  void run_layout_changes_only(const float* input, float*, void* workspace) const override {
    reorder_blocked_images(input, p_.n, image_, aligned_workspace(workspace), by_image_, threads_, group_);
  }

 private:
  static std::int64_t round_up(std::int64_t channels) { return (channels + kBlock - 1) / kBlock * kBlock; }

  // Every chunk reads all of U (a^2 x C x K floats): where U outgrows the L2 cache, it comes from
  // beyond L2 once per chunk, 2 x tiles FLOPs per float. Chunks of 3 tiles (F(4x4), C = K = 512: V
  // and M within 512 KiB) made resnet18's 7 x 7 layers memory-bound, 0.5x oneDNN. There, chunks of
  // as many tiles as keep one point's V and M (tiles x (C + K) floats) within kPointBytes: each
  // point's GEMM finds them in L2, and the chunk's whole V and M pass beyond it once. Swept over
  // 64-1024 KiB on resnet18's four 3 x 3 shapes at batch 32 (Zen 5, five runs): 128 KiB the best
  // overall; 512 channels alone liked 1 MiB (1.83x -> 1.88x oneDNN), 64 and 128 channels lost there.
  std::int64_t streamed_u_tiles() const {
    if (a * a * c_pad_ * k_pad_ * static_cast<std::int64_t>(sizeof(float)) <= kL2Bytes) return 0;
    return std::max<std::int64_t>(1, kPointBytes / (static_cast<std::int64_t>(sizeof(float)) * (c_pad_ + k_pad_)));
  }
  // The L2 a chunk's V and M (or U) may fill; one point's V and M where U does not fit.
  static constexpr std::int64_t kL2Bytes = 512 << 10, kPointBytes = 128 << 10;
  std::int64_t chunk_floats() const { return a * a * chunk_tiles_ * (c_pad_ + k_pad_); }
  std::int64_t images() const { return by_image_ ? threads_ * group_ : 1; }
  std::int64_t chunks_per_item() const { return (group_ * tiles_h_ * tiles_w_ + chunk_tiles_ - 1) / chunk_tiles_; }

  // Images per group: up to `wanted`, in groups that share out evenly between the threads (or
  // nearly: many groups), since a thread takes whole groups.
  static std::int64_t images_per_group(std::int64_t images, int threads, std::int64_t wanted) {
    for (std::int64_t g = std::min(wanted, images / threads); g > 1; --g)
      if ((images % g == 0 && images / g % threads == 0) || (images + g - 1) / g >= 4 * threads) return g;
    return 1;
  }

  // Tiles [first, first + count) of the images whose padded copies start at `blocked` (one after
  // another, tiles numbered image by image) and whose NCHW outputs start at `out`.
  void run_chunk(const float* blocked, float* out, std::int64_t first, std::int64_t count, float* scratch) const {
    const std::int64_t tiles = tiles_h_ * tiles_w_, image_out = p_.k * p_.out_h() * p_.out_w();
    float* v = scratch;                                // [xi][c / block][t][c % block]
    float* mm = scratch + a * a * chunk_tiles_ * c_pad_;  // [xi][t][k]
    // Tile t of the chunk: its image, and its row and column of tiles there.
    const auto where = [&](std::int64_t t) {
      return std::array{(first + t) / tiles, (first + t) % tiles / tiles_w_, (first + t) % tiles_w_};
    };
    for (std::int64_t t = 0; t < count; ++t) {
      const auto [image, ty, tx] = where(t);
      const float* tile = blocked + image * image_.elems() + ty * m * image_.row_stride() + tx * m * kBlock;
      for (std::int64_t cb = 0; cb < c_pad_ / kBlock; ++cb)
        input_tile(tile + cb * image_.block_stride(), v + (cb * count + t) * kBlock, count * c_pad_);
    }
    // The GEMMs: a 1x1 "convolution" over the channels with the tiles as pixels.
    // V blocked like an NCHWc row (tiles as pixels), so a GEMM tile's broadcasts are at fixed
    // offsets from one pointer, as cpu.02's unit-stride tiles' are.
    const TileGeometry g{.channels = p_.c, .r = 1, .s = 1, .in_block_stride = count * kBlock, .in_tap_row = 0,
                         .in_tap_col = 0, .in_pixel = kBlock, .w_block_stride = c_pad_ * kBlock};
    for (int xi = 0; xi < a * a; ++xi) {
      const float* vx = v + xi * count * c_pad_;
      const float* ux = u_.get() + xi * k_pad_ * c_pad_;
      float* mx = mm + xi * count * k_pad_;
      for (std::int64_t group = 0; group < k_groups_.parts; ++group) {
        const std::int64_t kb0 = k_groups_.begin(group);
        const int kbs = k_groups_.size(group);
        for_each_tile(
            count,
            [&](std::int64_t t0, int width) {
              kGemmTiles[kbs - 1][width - 1](vx + t0 * kBlock, ux + kb0 * kBlock * c_pad_, g,
                                             mx + t0 * k_pad_ + kb0 * kBlock, k_pad_);
            },
            max_tile_width(kbs));
      }
    }
    for (std::int64_t t = 0; t < count; ++t) {
      const auto [image, ty, tx] = where(t);
      for (std::int64_t kb = 0; kb < k_pad_ / kBlock; ++kb)
        output_tile(mm + t * k_pad_ + kb * kBlock, count * k_pad_, kb, out + image * image_out, ty, tx);
    }
  }

  // V = B^T d B for one tile and one block of channels; point xi lands at v + xi * xi_stride.
  void input_tile(const float* d, float* v, std::int64_t xi_stride) const {
    const std::int64_t row = image_.row_stride();
    Vec rows[a][a];  // rows[i][j] = sum_l BT[j][l] d[i][l]
#pragma GCC unroll 8
    for (int i = 0; i < a; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < a; ++j)
        rows[i][j] = combine(F::bt[j], [&](int l) { return Vec::load_aligned(d + i * row + l * kBlock); });
#pragma GCC unroll 8
    for (int i2 = 0; i2 < a; ++i2)
#pragma GCC unroll 8
      for (int j = 0; j < a; ++j)
        combine(F::bt[i2], [&](int i) { return rows[i][j]; }).store_aligned(v + (i2 * a + j) * xi_stride);
  }

  // Y = A^T M A + bias, activated, for one tile and one block of output channels, into NCHW.
  void output_tile(const float* mk, std::int64_t xi_stride, std::int64_t kb, float* out_image, std::int64_t ty,
                   std::int64_t tx) const {
    Vec cols[m][a];  // cols[i2][j] = sum_i AT[i2][i] M[i][j]
#pragma GCC unroll 8
    for (int i2 = 0; i2 < m; ++i2)
#pragma GCC unroll 8
      for (int j = 0; j < a; ++j)
        cols[i2][j] = combine(F::at[i2], [&](int i) { return Vec::load_aligned(mk + (i * a + j) * xi_stride); });
    alignas(64) float y[m * m][kBlock];
    const Vec bias = Vec::load_aligned(bias_.get() + kb * kBlock);
#pragma GCC unroll 8
    for (int i2 = 0; i2 < m; ++i2)
#pragma GCC unroll 8
      for (int j2 = 0; j2 < m; ++j2)
        activate_vec(e_.activation, combine(F::at[j2], [&](int j) { return cols[i2][j]; }) + bias)
            .store_aligned(y[i2 * m + j2]);
    // Scatter the tile's m x m pixels to the channel planes: one scatter per pixel for a whole
    // tile of a full block, element by element where the tile overhangs the edge or K ends.
    // (Transposed 4-float row stores measured only ~4% better for F(4x4): the writes to 16
    // channel planes cost more than the instructions that make them.)
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
    const std::int64_t rows = std::min<std::int64_t>(m, oh - ty * m), cols_in = std::min<std::int64_t>(m, ow - tx * m);
    const std::int64_t channels = std::min(kBlock, p_.k - kb * kBlock);
    float* corner = out_image + kb * kBlock * oh * ow + ty * m * ow + tx * m;
    if (rows == m && cols_in == m && channels == kBlock && scatter_) {
      const auto planes = xsimd::batch<std::int32_t>::load_aligned(plane_offsets_);
      for (int i2 = 0; i2 < m; ++i2)
        for (int j2 = 0; j2 < m; ++j2) Vec::load_aligned(y[i2 * m + j2]).scatter(corner + i2 * ow + j2, planes);
      return;
    }
    for (std::int64_t kk = 0; kk < channels; ++kk)
      for (std::int64_t i2 = 0; i2 < rows; ++i2)
        for (std::int64_t j2 = 0; j2 < cols_in; ++j2) corner[kk * oh * ow + i2 * ow + j2] = y[i2 * m + j2][kk];
  }

  ConvProblem p_;
  Epilogue e_;
  int threads_;
  bool by_image_;  // whole images per thread when the batch shares out (as in cpu.02)
  std::int64_t group_ = 1;  // images per item when by_image_ (images_per_group)
  std::int64_t tiles_h_, tiles_w_, c_pad_, k_pad_;
  PaddedBlockedImage image_;
  EvenSplit k_groups_;  // the output-channel blocks, in groups of at most kMaxKBlocks (as cpu.02)
  std::int64_t chunk_tiles_ = 1;
  bool scatter_ = false;  // channel-plane offsets fit the int32 scatter indices
  alignas(64) std::int32_t plane_offsets_[kBlock];
  std::unique_ptr<float[], detail::AlignedFree> u_, bias_;
};

// The plan step every Winograd kernel shares: checks, then plans for the current OpenMP threads.
template <class F>
std::unique_ptr<PlannedConv> plan(std::string_view id, const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  if (const std::string why = unsupported(p); !why.empty())
    throw InputError(fmt::format("{}: {}: {}", id, to_string(p), why));
  return std::make_unique<WinogradConv<F>>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu::winograd
