// Blocked activation layouts for the SIMD kernels, kept in one place.
//
// NCHWc ("channel-blocked", oneDNN's nChw16c when c = 16): channels are split into blocks of
// `block` (the SIMD width in floats) and a block's values for one pixel are contiguous, so one
// aligned vector load gives one pixel's `block` channels. The channel count is padded up to the
// block with zeros, which lets kernels handle any C without a tail loop: the padded channels
// multiply zero weights.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>

#include <omp.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/common/problem.hpp"
#include "kernels/common/tensor.hpp"

namespace convlab::cpu {

#if defined(__AVX512F__)
// Transposes 16 x 16 floats in registers (r[i] lane j <-> r[j] lane i): 64 shuffles. For NCHW <->
// NCHWc with 16-float blocks (the input reorder, the tiles' epilogue), where gathers and scalar
// copies cost several times more. xsimd 8.1 has no transpose, hence the intrinsics.
namespace transpose_detail {
// The masked forms with an all-ones mask: the plain unpacks and shuffles pass GCC 12 an
// undefined operand that -Wuninitialized reports.
inline __m512 unpack_lo_ps(__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, 0xffff, a, b); }
inline __m512 unpack_hi_ps(__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, 0xffff, a, b); }
inline __m512 unpack_lo_pd(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpacklo_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
inline __m512 unpack_hi_pd(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpackhi_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
template <int kLanes>
inline __m512 shuffle_lanes(__m512 a, __m512 b) { return _mm512_mask_shuffle_f32x4(a, 0xffff, a, b, kLanes); }
}  // namespace transpose_detail

[[gnu::always_inline]] inline void transpose_16x16(__m512 (&r)[16]) {
  using namespace transpose_detail;
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // interleave pairs of rows: 1-float granules
    t[i] = unpack_lo_ps(r[i], r[i + 1]);
    t[i + 1] = unpack_hi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // 2-float granules
    r[i] = unpack_lo_pd(t[i], t[i + 2]);
    r[i + 1] = unpack_hi_pd(t[i], t[i + 2]);
    r[i + 2] = unpack_lo_pd(t[i + 1], t[i + 3]);
    r[i + 3] = unpack_hi_pd(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8)  // 128-bit lanes
    for (int i = 0; i < 4; ++i) {
      t[h + i] = shuffle_lanes<0x88>(r[h + i], r[h + i + 4]);
      t[h + i + 4] = shuffle_lanes<0xdd>(r[h + i], r[h + i + 4]);
    }
  for (int i = 0; i < 8; ++i) {  // 256-bit halves
    r[i] = shuffle_lanes<0x88>(t[i], t[i + 8]);
    r[i + 8] = shuffle_lanes<0xdd>(t[i], t[i + 8]);
  }
}
#endif

#if defined(__AVX2__)
// Transposes 8 x 8 floats in registers (r[i] lane j <-> r[j] lane i): 24 shuffles. The AVX2
// counterpart of transpose_16x16, for 8-float blocks: Zen 3's 8-lane gathers and the scalar
// copies through L1 it replaces cost several times more (bench/RESULTS.md, "AVX2 transposes").
// Always inlined (as transpose_16x16): as a call its vectors go through memory both ways, and GCC
// 12 left 89 of its uses as calls, cpu.02's 1 x 1 epilogue among them once that file had more tiles
// (mb32ic16ih32oc32oh32kh1: 0.45 -> 0.62 ms).
[[gnu::always_inline]] inline void transpose_8x8(__m256 (&r)[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {  // interleave pairs of rows: 1-float granules
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {  // 2-float granules
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {  // 128-bit halves
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}
#endif

// One image in NCHWc with its spatial padding materialised as zeros, so a convolution reading it
// needs no bounds checks: every tap of every output pixel lands inside the padded image.
struct PaddedBlockedImage {
  std::int64_t channels, height, width;  // the unpadded NCHW image
  std::int64_t pad_h, pad_w;
  std::int64_t block;
  // More zeros below and to the right: asymmetric padding, and kernels whose last tile reads past
  // the padding.
  std::int64_t extra_h = 0, extra_w = 0;
  bool prefetch_rows = false;  // the copy asks for its input lines rows ahead (prefetch_input_rows)

  std::int64_t channel_blocks() const { return (channels + block - 1) / block; }
  std::int64_t padded_height() const { return height + 2 * pad_h + extra_h; }
  std::int64_t padded_width() const { return width + 2 * pad_w + extra_w; }
  std::int64_t block_stride() const { return padded_height() * padded_width() * block; }  // between channel blocks
  std::int64_t row_stride() const { return padded_width() * block; }
  std::int64_t elems() const { return channel_blocks() * block_stride(); }
};

// Whether the copy of p's input images into blocks of `block` channels asks for each block's NCHW
// lines a few rows ahead (nchw_to_padded_nchwc_row). The copy reads `block` channel planes at once,
// a short run of each per row; on a Zen 5 VM the hardware prefetchers did not follow runs of at
// most 4 lines (rows of 56 floats and less): with the lines asked for, cpu.05 at batch 32 took
// 0.64-0.76x the time on mobilenet-v2's 56 x 56, 28 x 28 and 14 x 14 depthwise layers, cpu.02 and
// cpu.04 0.93-0.96x on resnet18's 56 x 56 layer (its copies alone 1.4-2.0 -> 0.6-0.7 ms). Runs of
// 7 lines (112 floats) they did follow: 1.06x with. And an input that stays in cache from one
// forward to the next (a batch's under 2 MiB; in a network, at batch 1, the layer before has just
// written it) only pays the prefetches: 1.02-1.10x on lab-cnn's and resnet8's layers and on the
// depthwise layers at batch 1. Medians of six alternating rounds each (bench/RESULTS.md).
inline bool prefetch_input_rows(const ConvProblem& p, std::int64_t block) {
  constexpr std::int64_t kMaxRunBytes = 256, kCachedInputBytes = 2 << 20;
  const auto bytes = static_cast<std::int64_t>(sizeof(float));
  return p.c >= block && p.w * bytes <= kMaxRunBytes && p.input_elems() * bytes > kCachedInputBytes;
}

// Asks for the lines of `rows` rows of `width` floats, `stride` floats apart (one row of each of
// several channel planes), to read or, kWrite, with intent to write (PREFETCHW where the ISA has
// it). Inlined always: GCC 12 counts a function of prefetches alone as free of side effects and
// drops its calls where it does not inline it (no prefetch instruction left in the object).
template <bool kWrite>
[[gnu::always_inline]] inline void prefetch_lines(const float* first, std::int64_t rows, std::int64_t stride,
                                                  std::int64_t width) {
  constexpr std::int64_t kLine = 64 / sizeof(float);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = first + r * stride;
    for (std::int64_t x = 0; x < width; x += kLine) __builtin_prefetch(row + x, kWrite, 3);
    __builtin_prefetch(row + width - 1, kWrite, 3);  // the last line, when the row starts mid-line
  }
}

// The padded NCHWc copy of a convolution's input image: every tap of every output pixel inside it.
inline PaddedBlockedImage padded_input_image(const ConvProblem& p, std::int64_t block) {
  return {.channels = p.c, .height = p.h, .width = p.w, .pad_h = p.pad_h, .pad_w = p.pad_w, .block = block,
          .extra_h = p.padded_h() - p.h - 2 * p.pad_h, .extra_w = p.padded_w() - p.w - 2 * p.pad_w,
          .prefetch_rows = prefetch_input_rows(p, block)};
}

// Weights packed once in plan for kernels that load `block` outputs' weights as one aligned vector:
// PyTorch's [outs][inner] (inner = C/groups x R x S) -> [outs/block][inner][block], the last block's
// missing outputs padded with zero weights (computed, never stored).
std::unique_ptr<float[], detail::AlignedFree> pack_blocked_weights(std::span<const float> weight, std::int64_t outs,
                                                                   std::int64_t block);
// The biases padded the same way, zeros where there are none.
std::unique_ptr<float[], detail::AlignedFree> pack_blocked_bias(std::span<const float> bias, std::int64_t outs,
                                                                std::int64_t block);

// Writes padded row `padded_row` of channel block `cb` (borders included) of `image` from the
// NCHW image `nchw` (channels x height x width floats). Row-wise so callers can split an image
// between threads by rows, the same way they split the convolution that reads it.
void nchw_to_padded_nchwc_row(const float* nchw, const PaddedBlockedImage& image, std::int64_t cb,
                              std::int64_t padded_row, float* blocked);

// One input row of `width` floats, left-padded by `pad` zero columns, copied as two phases (the
// even and odd padded columns), so a stride-2 row's taps are neighbouring floats of one phase:
// padded column u = x + pad goes to to[u % 2 * phase_width + u / 2]. Positions no column reaches
// (the padding) are left as they are. Used by the row kernels (cpu.07, cpu.08) at stride 2.
void split_row_phases(const float* in, std::int64_t width, std::int64_t pad, std::int64_t phase_width, float* to);

// The first 64-byte aligned float of a workspace (workspaces are sized with Tensor::kAlignment
// of slack for this).
inline float* aligned_workspace(void* workspace) {
  const auto address = reinterpret_cast<std::uintptr_t>(workspace);
  return reinterpret_cast<float*>((address + 63) & ~std::uintptr_t{63});
}

// How threads that share each image (batch 1) share its copy: as their items read it, so that a
// thread reads back what it wrote, from its own L2, and not the other half from another core's.
enum class SharedCopy {
  by_rows,            // items rows first: each thread copies about the rows it convolves
  by_channel_blocks,  // items channel blocks first (cpu.05 on planes of short rows)
  per_thread,         // every item reads all the channels (items output-channel groups first):
                      // each thread copies the whole image for itself and meets no barrier
};

// The workspace of for_each_blocked_image: `group` copies per thread (whole_images), one per thread
// (SharedCopy::per_thread) or one shared, reused image after image so it stays in cache, + alignment
// slack for aligned_workspace.
inline std::size_t blocked_copies_bytes(const PaddedBlockedImage& image, bool whole_images, int threads,
                                        std::int64_t group = 1, SharedCopy shared = SharedCopy::by_rows) {
  const std::int64_t copies = whole_images ? threads * group : shared == SharedCopy::per_thread ? threads : 1;
  return static_cast<std::size_t>(copies * image.elems()) * sizeof(float) + Tensor::kAlignment;
}

// Whether a batch shares out between `threads` in whole images: evenly, or nearly (many images).
inline bool shares_whole_images(std::int64_t images, int threads) {
  return images % threads == 0 || images >= 4 * threads;
}

// One thread's copy of a whole image, block by block: each block's rows read its `block` channel
// planes as that many sequential streams, where row by row all C planes are read at once, more
// streams than the hardware prefetchers follow.
inline void copy_whole_image(const float* nchw, const PaddedBlockedImage& image, float* blocked) {
  for (std::int64_t cb = 0; cb < image.channel_blocks(); ++cb)
    for (std::int64_t row = 0; row < image.padded_height(); ++row)
      nchw_to_padded_nchwc_row(nchw, image, cb, row, blocked);
}

// The schedule of a kernel that reads padded NCHWc copies of its NCHW input images: each image is
// reordered, then work(n, copy, item, thread) runs for every item in [0, items) of image n
// (items: whatever the kernel splits an image into; thread: for per-thread scratch).
// whole_images: each thread takes whole images into its own copy (`copies` holds `threads` of
// them), reads back from its own cache and meets no barrier. Otherwise (batch 1) the threads
// share each image's items under a static schedule, and its copy as `shared` says.
// group > 1 (whole_images only): a thread takes `group` images n.. at a time into consecutive
// copies (the last group may be short) and work(n, first copy, item, thread) spans them all, for
// kernels whose images are too small to fill their tiles alone.
// copies == nullptr (group 1): the same schedule with no reorder, work reading NCHW image n itself
// (cpu.02's 1 x 1 layers read in place).
template <class Work>
void for_each_blocked_image(const float* input, std::int64_t images, const PaddedBlockedImage& image, float* copies,
                            bool whole_images, int threads, std::int64_t items, Work&& work,
                            std::int64_t group = 1, SharedCopy shared = SharedCopy::by_rows) {
  const std::int64_t image_in = image.channels * image.height * image.width;
  if (copies == nullptr) {
    if (whole_images) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t n = 0; n < images; ++n)
        for (std::int64_t item = 0; item < items; ++item) work(n, input + n * image_in, item, omp_get_thread_num());
      return;
    }
#pragma omp parallel num_threads(threads)
    for (std::int64_t n = 0; n < images; ++n) {
#pragma omp for schedule(static)
      for (std::int64_t item = 0; item < items; ++item) work(n, input + n * image_in, item, omp_get_thread_num());
    }
    return;
  }
  if (whole_images) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t first = 0; first < images; first += group) {
      const int thread = omp_get_thread_num();
      float* copy = copies + thread * group * image.elems();
      for (std::int64_t n = first; n < std::min(images, first + group); ++n)
        copy_whole_image(input + n * image_in, image, copy + (n - first) * image.elems());
      for (std::int64_t item = 0; item < items; ++item) work(first, copy, item, thread);
    }
    return;
  }
  if (shared == SharedCopy::per_thread) {
    // Each thread copies twice the floats of a shared copy, and in exchange neither waits for the
    // other's half nor fetches it from the other core: at batch 1 cpu.02 on the lab networks' 8 x 8
    // layers 1.18-1.48x -> 1.53-2.17x oneDNN, mobilenet-v2's features.17.conv.2 1.04x -> 1.24x (Zen 5).
#pragma omp parallel num_threads(threads)
    {
      const int thread = omp_get_thread_num();
      float* copy = copies + thread * image.elems();
      for (std::int64_t n = 0; n < images; ++n) {
        copy_whole_image(input + n * image_in, image, copy);
#pragma omp for schedule(static) nowait
        for (std::int64_t item = 0; item < items; ++item) work(n, copy, item, thread);
      }
    }
    return;
  }
#pragma omp parallel num_threads(threads)
  for (std::int64_t n = 0; n < images; ++n) {
    // Rows and channel blocks together: a plane of one row (1 x 1 layers read as one long row)
    // was one thread's copy while the other waited (mb1ic960ih7oc320oh7kh1: 2 threads 1.2x one).
    // The static schedule deals out contiguous runs of the (row, block) pairs, rows outermost or
    // blocks outermost as `shared` says.
    const std::int64_t rows = image.padded_height(), blocks = image.channel_blocks();
    const bool rows_first = shared == SharedCopy::by_rows;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < rows * blocks; ++i)
      nchw_to_padded_nchwc_row(input + n * image_in, image, rows_first ? i % blocks : i / rows,
                               rows_first ? i / blocks : i % rows, copies);
#pragma omp for schedule(static)
    for (std::int64_t item = 0; item < items; ++item) work(n, copies, item, omp_get_thread_num());
  }
}

// Only the reorders of for_each_blocked_image, for kernels' run_layout_changes_only.
inline void reorder_blocked_images(const float* input, std::int64_t images, const PaddedBlockedImage& image,
                                   float* copies, bool whole_images, int threads, std::int64_t group = 1,
                                   SharedCopy shared = SharedCopy::by_rows) {
  for_each_blocked_image(
      input, images, image, copies, whole_images, threads, 0, [](std::int64_t, const float*, std::int64_t, int) {},
      group, shared);
}

}  // namespace convlab::cpu
