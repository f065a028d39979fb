// cpu.06_pointwise_xsimd: 1x1 convolution as a hand-written, register-blocked GEMM.
//
// What changes against cpu.01_im2col_eigen: a 1x1 convolution in NCHW already is the GEMM
// out[K x HW] = W[K x C] * in[C x HW]; instead of Eigen, it is written out the way BLAS libraries
// do it, so each step can be read: plan packs W into panels of kMr rows; each thread packs kKc x
// kNr input panels into the workspace; the microkernel keeps a kMr x kNr output tile (6 x 2
// vectors) in registers, loads kNv input vectors and broadcasts kMr weights per channel. Bias
// starts the accumulators, the activation ends them; a stride first gathers its pixels. The
// batch's images are one GEMM of N*HW columns, so small planes share panels; a task whose columns
// span images sums in a workspace block, copied out at the end.
// Why faster: kMr*kNv FMAs per kMr+kNv loads, and 12 independent accumulators, more than the 8
// that cover a 4-cycle FMA latency on 2 pipes. Bound: compute-bound for the usual C >= 64.
// Measured: 110 GFLOP/s, 58% of the FMA peak, 0.98x oneDNN, 1.2x Eigen on mb32ic64ih28oc128oh28kh1;
//   76% of the peak, 0.95x oneDNN on mb32ic256ih28oc256oh28kh1 (4 x 3 and 3 x 4 tiles: 0.75x). Images
//   sharing panels: mobilenet-v2's 7 x 7 layers at batch 32 0.63-0.70x -> 0.80-0.91x oneDNN (a 7 x 7
//   plane had filled 49 of 64 columns), 14 x 14 0.75-0.93x -> 0.93-1.06x (2-core Zen 3 VM, AVX2).
//   Rows first where column blocks split unevenly: 14 x 14, K = 384-576, batch 1 1.01-1.05x -> 1.10-1.14x;
//   mirrored column blocks (the partial panel in the larger), K = 64-96: 0.96-0.97x -> 0.97-0.99x.
//   Row blocks of 64 panels, columns packed 1-4 times, not 2-14: 7 x 7 at batch 32 0.75-0.97x -> 1.03-1.17x (Zen 5).
// More: docs/kernel-notes.md#cpu06_pointwise_xsimd
// Run: build/convlab conv --problem mb32ic960ih7oc320oh7kh1 --kernel cpu.06_pointwise_xsimd,cpu.01_im2col_eigen,onednn.conv --interleave
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>
#include <xsimd/xsimd.hpp>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/cpu/microkernel.hpp"  // Vec, activate_vec, copy_floats

namespace convlab::cpu {

namespace {

constexpr std::int64_t kLanes = Vec::size;
constexpr std::int64_t kMr = 6;                // output rows (channels) per register tile
constexpr std::int64_t kNv = 2;                // SIMD vectors per tile row
constexpr std::int64_t kNr = kNv * kLanes;     // output columns (pixels) per register tile
constexpr std::int64_t kKc = 128;              // input channels per cache block
constexpr std::int64_t kColBlock = 8 * kNr;    // pixels per parallel task
// Output channels per parallel task: each task packs its columns again, so as many rows as keep a
// channel block's weights (64 panels x 128 channels: 192 KiB) and the task's sums (384 x 256 floats)
// about a 1 MiB L2. 16 panels packed mobilenet-v2's 7 x 7 columns 2-14 times; 64 panels, 1-4
// times: 0.75-0.97x -> 1.03-1.17x oneDNN at batch 32 (Zen 5, medians of three runs).
constexpr std::int64_t kRowBlock = 64 * kMr;
// ... except where the columns are fewer blocks than the threads (batch 1, small planes), which then
// split the rows: packing a few columns costs little, and a task's weights per channel block (16
// panels: 48 KiB) stay about L1 across its column panels (mb1ic960ih7oc320oh7kh1, 64 panels: 0.98x
// -> 0.82x oneDNN).
constexpr std::int64_t kRowBlockFewColumns = 16 * kMr;
// Packing a column's input channels costs about what two weight panels' FMAs on it do: packing was
// 14% of the time on a 16-panel layer (mobilenet-v2 features.12.conv.2, perf, Zen 3).
constexpr std::int64_t kPackPanels = 2;

// Where a tile's accumulators start and end: `first` block starts from the bias, later blocks from
// the partial sums already in the output; the `last` block applies the activation.
struct TileStep {
  bool first, last;
  Activation activation;
};

// out[kMr x kNr] (+)= panel[kMr x kc] * pixels[kc x kNr], both operands packed. Rows past `rows`
// (the zero padding of the last weight panel) are computed but never loaded or stored.
template <int kV = kNv>
void tile(const float* panel, const float* bias, const float* pixels, std::int64_t kc, float* out,
          std::int64_t ld_out, std::int64_t rows, TileStep step) {
  Vec acc[kMr][kV];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
  CONVLAB_TILE_LOOP_GCC_TOO
  for (std::int64_t r = 0; r < kMr; ++r)
    CONVLAB_TILE_LOOP_GCC_TOO
    for (std::int64_t v = 0; v < kV; ++v)
      acc[r][v] = step.first ? Vec(bias[r])
                  : r < rows ? Vec::load_unaligned(out + r * ld_out + v * kLanes)
                             : Vec(0.0f);
  for (std::int64_t c = 0; c < kc; ++c) {
    Vec in[kV];
    CONVLAB_TILE_LOOP
    for (std::int64_t v = 0; v < kV; ++v) in[v] = Vec::load_unaligned(pixels + c * kNr + v * kLanes);
    CONVLAB_TILE_LOOP
    for (std::int64_t r = 0; r < kMr; ++r) {
      const Vec weight(panel[c * kMr + r]);
      CONVLAB_TILE_LOOP
      for (std::int64_t v = 0; v < kV; ++v) acc[r][v] = xsimd::fma(weight, in[v], acc[r][v]);
    }
  }
  CONVLAB_TILE_LOOP_GCC_TOO
  for (std::int64_t r = 0; r < kMr; ++r) {
    if (r >= rows) break;  // not in the loop's condition: its count stays a constant (tile_loop.hpp)
    CONVLAB_TILE_LOOP_GCC_TOO
    for (std::int64_t v = 0; v < kV; ++v) {
      const Vec result = step.last ? activate_vec(step.activation, acc[r][v]) : acc[r][v];
      result.store_unaligned(out + r * ld_out + v * kLanes);
    }
  }
}

// Where the GEMM's columns are: column j of the batch's out[K x N*HW] is pixel j % hw of image
// j / hw, so images of small planes share column panels (a 7 x 7 plane alone filled 49 of a panel
// row's 64 columns).
struct Columns {
  std::int64_t hw, in_image, out_image;  // pixels per plane; floats per input and output image
  // fn(offset in [0, cols), image, pixel, length) for each stretch of columns [x, x + cols) that
  // lies in one image.
  template <class Fn>
  void for_each_run(std::int64_t x, std::int64_t cols, Fn&& fn) const {
    for (std::int64_t col = 0; col < cols;) {
      const std::int64_t n = (x + col) / hw, pixel = (x + col) % hw, length = std::min(hw - pixel, cols - col);
      fn(col, n, pixel, length);
      col += length;
    }
  }
};

// The last, narrower column panel: the tile is computed on a copy, the valid columns kept; one
// vector's columns by a one-vector tile (half the FMAs of a 7 x 7 plane's fourth panel, its 49th
// column).
void edge_tile(const float* panel, const float* bias, const float* pixels, std::int64_t kc, float* out,
               std::int64_t ld_out, std::int64_t rows, std::int64_t cols, TileStep step) {
  alignas(64) float edge[kMr * kNr] = {};
  if (!step.first)
    for (std::int64_t r = 0; r < rows; ++r) copy_floats(out + r * ld_out, cols, edge + r * kNr);
  if (cols <= kLanes) tile<1>(panel, bias, pixels, kc, edge, kNr, rows, step);
  else tile(panel, bias, pixels, kc, edge, kNr, rows, step);
  for (std::int64_t r = 0; r < rows; ++r) copy_floats(edge + r * kNr, cols, out + r * ld_out);
}

class PointwiseConv final : public PlannedConv {
 public:
  PointwiseConv(const ConvProblem& p, const ConvWeights& w, Epilogue e)
      : p_(p), epilogue_(e), threads_(std::max(1, omp_get_max_threads())), schedule_(pick_schedule(p, threads_)) {
    const std::int64_t panels = weight_panels(p.k);
    // Packed weights: panel q, channel c, row r at ((q * C) + c) * kMr + r; rows past K are zero.
    packed_.assign(static_cast<std::size_t>(panels * p.c * kMr), 0.0f);
    bias_.assign(static_cast<std::size_t>(panels * kMr), 0.0f);
    for (std::int64_t k = 0; k < p.k; ++k) {
      for (std::int64_t c = 0; c < p.c; ++c)
        packed_[static_cast<std::size_t>(((k / kMr) * p.c + c) * kMr + k % kMr)] = w.weight[k * p.c + c];
      if (!w.bias.empty()) bias_[static_cast<std::size_t>(k)] = w.bias[k];
    }
  }

  std::size_t weight_bytes() const override { return (packed_.size() + bias_.size()) * sizeof(float); }

  // One packed input block per thread (the thread count seen at plan), then for stride > 1 the
  // strided pixels of the whole batch, C x OH*OW per image.
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(threads_ * kThreadFloats + (strided() ? p_.n * p_.c * pixels() : 0)) *
           sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    float* pack = static_cast<float*>(workspace);
    const float* gemm_in = input;
    if (strided()) {
      float* gathered = pack + threads_ * kThreadFloats;
      gather_strided(input, gathered);
      gemm_in = gathered;
    }
    const EvenSplit col_blocks = column_blocks(p_);
    const std::int64_t row_blocks = schedule_.row_blocks(p_.k), tasks = col_blocks.parts * row_blocks;
    const int threads = static_cast<int>(std::min<std::int64_t>(threads_, omp_get_max_threads()));
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t task = 0; task < tasks; ++task) {
      const auto [cb, rb] = schedule_.task(task, col_blocks.parts, row_blocks);
      const auto [x0, x1] = column_range(p_, col_blocks, cb, schedule_.larger_last);
      block(gemm_in, output, pack + omp_get_thread_num() * kThreadFloats, rb * schedule_.row_panels * kMr,
            std::min(p_.k, (rb + 1) * schedule_.row_panels * kMr), x0, x1);
    }
  }

 private:
  // Per thread: the packed input block, then the output block of a task whose columns span images.
  static constexpr std::int64_t kPackFloats = kKc * kColBlock;
  static constexpr std::int64_t kThreadFloats = kPackFloats + kRowBlock * kColBlock;

  // The column blocks, in column panels: at most kColBlock columns each, near-equal. A 14 x 14
  // plane at batch 1 was blocks of 128 and 68 columns, one thread doing 8 panels' work where the
  // other did 5: mobilenet-v2 0.85-0.94x oneDNN -> 0.94-1.02x (medians of three, Zen 3, 2 threads).
  static EvenSplit column_blocks(const ConvProblem& p) {
    return EvenSplit((p.n * p.out_h() * p.out_w() + kNr - 1) / kNr, kColBlock / kNr);
  }

  // The columns [x0, x1) of column block cb. EvenSplit makes its larger blocks first; larger_last
  // mirrors the split, so that the last block, whose last panel may be partial, is a larger one.
  static std::pair<std::int64_t, std::int64_t> column_range(const ConvProblem& p, const EvenSplit& blocks,
                                                            std::int64_t cb, bool larger_last) {
    const std::int64_t mirrored = blocks.parts - 1 - cb, size = blocks.size(larger_last ? mirrored : cb);
    const std::int64_t x0 = (larger_last ? blocks.count - blocks.begin(mirrored) - size : blocks.begin(cb)) * kNr;
    return {x0, std::min(p.n * p.out_h() * p.out_w(), x0 + size * kNr)};
  }

  static std::int64_t weight_panels(std::int64_t k) { return (k + kMr - 1) / kMr; }

  // The parallel tasks, (column block, row block of row_panels kMr-row weight panels), in the
  // order the static schedule deals them out in contiguous runs: column blocks first, or rows
  // first (each thread then takes whole row blocks across every column).
  struct Schedule {
    std::int64_t row_panels;
    bool rows_first;
    bool larger_last = false;  // column_range's order of block sizes
    std::int64_t row_blocks(std::int64_t k) const { return (weight_panels(k) + row_panels - 1) / row_panels; }
    std::pair<std::int64_t, std::int64_t> task(std::int64_t i, std::int64_t col_parts, std::int64_t row_blocks) const {
      return rows_first ? std::pair{i % col_parts, i / col_parts} : std::pair{i / row_blocks, i % row_blocks};
    }
  };

  // The busiest thread's work under OpenMP's static schedule (contiguous runs differing by at most
  // one task), in output vectors x weight panels: a partial column panel counts its vectors, and
  // each task's packing of its columns counts as kPackPanels more panels.
  static std::int64_t busiest_thread(const ConvProblem& p, std::int64_t threads, const Schedule& s) {
    const EvenSplit cols = column_blocks(p);
    const std::int64_t panels = weight_panels(p.k), row_blocks = s.row_blocks(p.k), tasks = cols.parts * row_blocks;
    std::int64_t busiest = 0;
    for (std::int64_t t = 0, first = 0; t < threads; ++t) {
      const std::int64_t count = tasks / threads + (t < tasks % threads ? 1 : 0);
      std::int64_t work = 0;
      for (std::int64_t i = first; i < first + count; ++i) {
        const auto [cb, rb] = s.task(i, cols.parts, row_blocks);
        const auto [x0, x1] = column_range(p, cols, cb, s.larger_last);
        const std::int64_t rows = std::min(panels, (rb + 1) * s.row_panels) - rb * s.row_panels;
        work += (x1 - x0 + kLanes - 1) / kLanes * (rows + kPackPanels);
      }
      busiest = std::max(busiest, work);
      first += count;
    }
    return busiest;
  }

  // Column blocks first, with kRowBlock rows per task, or, when the images and column blocks are
  // fewer than the threads, the panels split evenly among them, at most kRowBlockFewColumns rows (a
  // 128-channel 8 x 8 layer at batch 1 had been one column block and row blocks of 96 and 32 rows:
  // 0.96x oneDNN, 1.30x split evenly, Zen 2). Rows first when that unloads the busiest thread by
  // over 10%: a 14 x 14 plane at batch 1 is 13 column panels, 7 and 6 on two threads, the last of 4
  // columns; rows first, each thread packs all 13 (worth it where K is large: 576 output channels
  // 1.01x -> 1.11x oneDNN, Zen 3). Columns first, the blocks mirrored where that unloads the busiest
  // thread: the 7 panels to the block with the partial one (K = 96: 14 + 11 vectors -> 12 + 13,
  // 0.96x -> 0.97-0.99x oneDNN).
  static Schedule pick_schedule(const ConvProblem& p, std::int64_t threads) {
    const std::int64_t panels = weight_panels(p.k), tasks = column_blocks(p).parts;
    const std::int64_t most_panels = (tasks < threads ? kRowBlockFewColumns : kRowBlock) / kMr;
    Schedule columns_first{most_panels, false};
    if (tasks < threads) {
      const std::int64_t blocks = std::min(panels, (threads + tasks - 1) / tasks);
      columns_first.row_panels = std::min(most_panels, (panels + blocks - 1) / blocks);
    }
    const std::int64_t row_blocks = threads * ((panels + threads * most_panels - 1) / (threads * most_panels));
    const Schedule rows_first{(panels + row_blocks - 1) / row_blocks, true};
    const std::int64_t columns_first_work = busiest_thread(p, threads, columns_first);
    if (10 * busiest_thread(p, threads, rows_first) < 9 * columns_first_work) return rows_first;
    Schedule mirrored = columns_first;
    mirrored.larger_last = true;
    return busiest_thread(p, threads, mirrored) < columns_first_work ? mirrored : columns_first;
  }

  bool strided() const { return p_.stride_h != 1 || p_.stride_w != 1; }
  std::int64_t pixels() const { return p_.out_h() * p_.out_w(); }

  void gather_strided(const float* input, float* gathered) const {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t c = 0; c < p_.c; ++c) {
        const float* in = input + (n * p_.c + c) * p_.h * p_.w;
        float* out = gathered + (n * p_.c + c) * oh * ow;
        for (std::int64_t y = 0; y < oh; ++y)
          for (std::int64_t x = 0; x < ow; ++x) out[y * ow + x] = in[y * p_.stride_h * p_.w + x * p_.stride_w];
      }
  }

  Columns columns() const { return {pixels(), p_.c * pixels(), p_.k * pixels()}; }

  // Input rows [c0, c0+kc) x columns [x0, x1) into panels of kNr columns, each kc x kNr contiguous
  // and zero-padded: the tile then streams its operand from L1 instead of kc rows hw apart.
  static void pack_pixels(const float* in, const Columns& columns, std::int64_t kc, std::int64_t x0,
                          std::int64_t x1, float* pack) {
    for (std::int64_t x = x0; x < x1; x += kNr, pack += kc * kNr) {
      const std::int64_t cols = std::min(kNr, x1 - x);
      columns.for_each_run(x, cols, [&](std::int64_t col, std::int64_t n, std::int64_t pixel, std::int64_t length) {
        const float* from = in + n * columns.in_image + pixel;
        for (std::int64_t c = 0; c < kc; ++c) copy_floats(from + c * columns.hw, length, pack + c * kNr + col);
      });
      if (cols < kNr)
        for (std::int64_t c = 0; c < kc; ++c) std::fill(pack + c * kNr + cols, pack + (c + 1) * kNr, 0.0f);
    }
  }

  // Output rows [k0, k1) x columns [x0, x1) of the batch, channel block by channel block. Columns
  // of one image are summed in place in the output; columns spanning images (small planes) in a
  // block of the workspace with whole panels, copied out at the end (no tile straddles images).
  void block(const float* in, float* out, float* workspace, std::int64_t k0, std::int64_t k1, std::int64_t x0,
             std::int64_t x1) const {
    const Columns at = columns();
    const std::int64_t n0 = x0 / at.hw;
    const bool in_place = (x1 - 1) / at.hw == n0;
    float* pack = workspace;
    float* sums = workspace + kPackFloats;  // [k1 - k0][kColBlock], when not in place
    for (std::int64_t c0 = 0; c0 < p_.c; c0 += kKc) {
      const std::int64_t kc = std::min(kKc, p_.c - c0);
      const TileStep step{.first = c0 == 0, .last = c0 + kc == p_.c, .activation = epilogue_.activation};
      pack_pixels(in + c0 * at.hw, at, kc, x0, x1, pack);
      for (std::int64_t x = x0; x < x1; x += kNr) {
        const float* pixels_panel = pack + (x - x0) / kNr * kc * kNr;
        const std::int64_t cols = std::min(kNr, x1 - x);
        for (std::int64_t k = k0; k < k1; k += kMr) {
          const float* panel = packed_.data() + ((k / kMr) * p_.c + c0) * kMr;
          const float* bias = bias_.data() + k;
          const std::int64_t rows = std::min(kMr, k1 - k);
          float* image_out = out + n0 * at.out_image + k * at.hw + x - n0 * at.hw;
          if (!in_place) tile(panel, bias, pixels_panel, kc, sums + (k - k0) * kColBlock + x - x0, kColBlock, rows, step);
          else if (cols == kNr) tile(panel, bias, pixels_panel, kc, image_out, at.hw, rows, step);
          else edge_tile(panel, bias, pixels_panel, kc, image_out, at.hw, rows, cols, step);
        }
      }
    }
    if (!in_place)
      at.for_each_run(x0, x1 - x0, [&](std::int64_t col, std::int64_t n, std::int64_t pixel, std::int64_t length) {
        for (std::int64_t k = k0; k < k1; ++k)
          copy_floats(sums + (k - k0) * kColBlock + col, length, out + n * at.out_image + k * at.hw + pixel);
      });
  }

  ConvProblem p_;
  Epilogue epilogue_;
  std::int64_t threads_;  // packing buffers in the workspace
  Schedule schedule_;         // the parallel tasks (pick_schedule)
  std::vector<float> packed_, bias_;
};

}  // namespace

std::string pointwise_xsimd_unsupported(const ConvProblem& p) {
  if (p.r != 1 || p.s != 1) return fmt::format("1x1 kernels only, got kh{} kw{}", p.r, p.s);
  if (p.groups != 1) return fmt::format("groups 1 only, got g{}", p.groups);
  if (p.has_padding())
    return fmt::format("padding 0 only, got {} above, {} below, {} left, {} right", p.pad_h, p.pad_bottom(), p.pad_w,
                       p.pad_right());
  return {};
}

std::unique_ptr<PlannedConv> pointwise_xsimd_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  if (std::string why = pointwise_xsimd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.06_pointwise_xsimd does not support {}: {}", to_string(p), why));
  check_weights(p, w);
  return std::make_unique<PointwiseConv>(p, w, e);
}

}  // namespace convlab::cpu
