// cpu.07_depthwise_rows: depthwise convolution along NCHW rows, with no layout change.
//
// What changes against cpu.05_depthwise_xsimd: a vector holds `block` neighbouring output pixels
// of one channel's row (block = the SIMD width), as NCHW already stores them, so nothing is
// reordered to NCHWc and no tile is transposed back. Each channel's plane is copied into a
// zero-padded per-thread buffer (L1 or L2 sized); per tap, one unaligned load and one FMA with the
// broadcast weight; each result vector is stored straight into its output row. Eight rows at a
// time give eight independent FMA chains. Stride 2 across: each padded row is copied as two phases
// (even, odd columns), so a strided vector's taps are neighbouring floats of one phase.
// Narrow planes (3 x 3, output rows at most a vector wide: 7 x 7 with AVX2): no copy; masked loads
// read each input row's 3 tap columns (zeros outside it; at stride 2 two pairs split by shuffles)
// and feed every output row using it: 3 loads per input row instead of 9.
// Why faster (where it is): on small maps cpu.05's reorder and transposed stores cost as much as
// its R*S FMAs per output vector; here an output vector costs R*S loads and FMAs and one store.
// Bound: loads (one per FMA, from L1) and, at batch 32, reading the input (prefetched 4 KiB ahead:
// 1.7x on 14 x 14 planes) and writing the output once each. Limits: dilation 1, stride across <= 2.
// Measured: 2-core Zen 3 VM, AVX2, interleaved, medians of 3 runs: g128mb32ic128ih8 0.90-1.06x oneDNN
//   (cpu.05 0.71-0.75x); g64mb32ic64ih16 1.21-1.36x (cpu.05 0.86-0.95x). mobilenet-v2 at batch 1: g576 14x14
//   1.23x (cpu.05 0.75x), stride 2 g96 112x112 1.00x, g144 1.19x. Narrow planes: g960 7x7 batch 1
//   0.60x -> 1.47x, batch 32 0.51x -> 1.11x; g576 14x14 stride 2 -> 7x7 0.91x -> 1.38x, 1.12x -> 1.20x.
// Run: build/convlab conv --problem g960mb1ic960ih7oc960oh7kh3ph1 --kernel cpu.05_depthwise_xsimd,cpu.07_depthwise_rows,onednn.conv --interleave
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

constexpr int kRows = 8;  // output rows per strip: independent FMA chains to cover the latency

// Where one channel's plane is convolved: its zero-padded copy and the layer's shape. A padded row
// is stored as stride_w phases: phase q holds its columns q, q + stride_w, ... (at stride 1, the
// row), so the taps of a strided output vector are neighbouring floats of one phase.
struct PlaneGeometry {
  std::int64_t row_pitch, phase_width, stride_h, out_h, out_w, r, s;
  Activation activation;
};

// One output row's vector at `to`: whole where it ends inside the plane (its extra lanes land in
// later rows, which are stored after it), else only its first `lanes` floats (a plane's last rows).
inline void store_row_vector(Vec result, float* to, bool inside_plane, std::int64_t lanes) {
  if (inside_plane) return result.store_unaligned(to);
  alignas(Tensor::kAlignment) float part[kBlock];
  result.store_aligned(part);
  // Not copy_floats: GCC 12 cannot rule out its whole-vector branch here and warns (-Warray-bounds).
  for (std::int64_t x = 0; x < lanes; ++x) to[x] = part[x];
}

// Output rows [y0, y0 + kStrip) of one channel, columns [x0, x0 + block), of which the first
// `lanes` are stored: taps summed in the order (i, j), bias added last. k3x3: the kernel is 3 x 3,
// the tap loops unrolled (as cpu.02's, microkernel.hpp). kStride: the stride across (1 or 2).
template <int kStrip, bool k3x3, int kStride>
inline void strip_vector(const float* padded, const float* taps, float bias, const PlaneGeometry& g, std::int64_t y0,
                         std::int64_t x0, std::int64_t lanes, float* out) {
  const std::int64_t r = k3x3 ? 3 : g.r, s = k3x3 ? 3 : g.s, row_step = g.stride_h * g.row_pitch;
  Vec acc[kStrip];
  for (Vec& a : acc) a = Vec(0.0f);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < s; ++j) {
      const Vec wv(taps[i * s + j]);
      const float* in = padded + (y0 * g.stride_h + i) * g.row_pitch + j % kStride * g.phase_width + x0 + j / kStride;
      for (int y = 0; y < kStrip; ++y) acc[y] = xsimd::fma(Vec::load_unaligned(in + y * row_step), wv, acc[y]);
    }
  for (int y = 0; y < kStrip; ++y) {
    const Vec result = activate_vec(g.activation, acc[y] + Vec(bias));
    // A row narrower than a vector is stored whole too where the vector ends inside the plane.
    store_row_vector(result, out + (y0 + y) * g.out_w + x0,
                     lanes == kBlock || (y0 + y) * g.out_w + kBlock <= g.out_h * g.out_w, lanes);
  }
}

// Output rows [y0, y0 + kStrip) of one channel. A row at least a vector wide ends on a whole
// vector overlapping the one before (the same sums, stored twice); a narrower one is one partial.
template <int kStrip, bool k3x3, int kStride>
void strip(const float* padded, const float* taps, float bias, const PlaneGeometry& g, std::int64_t y0, float* out) {
  constexpr auto vector = strip_vector<kStrip, k3x3, kStride>;
  std::int64_t x0 = 0;
  for (; x0 + kBlock <= g.out_w; x0 += kBlock) vector(padded, taps, bias, g, y0, x0, kBlock, out);
  if (x0 == g.out_w) return;
  if (g.out_w >= kBlock) vector(padded, taps, bias, g, y0, g.out_w - kBlock, kBlock, out);
  else vector(padded, taps, bias, g, y0, 0, g.out_w, out);
}

// kStrips[stride across - 1][3 x 3][rows - 1]: a strip of 1..kRows rows (the last strip of a plane
// may be short).
template <bool k3x3, int kStride>
constexpr auto strips = []<std::size_t... kR>(std::index_sequence<kR...>) {
  return std::array{&strip<static_cast<int>(kR) + 1, k3x3, kStride>...};
}(std::make_index_sequence<kRows>());
constexpr std::array kStrips = {std::array{strips<false, 1>, strips<true, 1>},
                                std::array{strips<false, 2>, strips<true, 2>}};

#if defined(__AVX2__)
// Planes whose output rows are at most a vector wide (7 x 7, and 14 x 14 with AVX-512), 3 x 3, the
// same stride both ways: each input row is read straight from the input by masked loads (lanes
// outside the row read zero: the left and right padding), once per tap column, and feeds every
// output row of the strip that uses it. No padded copy; 3 loads per input row where the copied
// path loads once per tap and output row (9).
constexpr bool kNarrowPath = true;
#if defined(__AVX512F__)
using LaneMask = __mmask16;
inline Vec masked_load(const float* from, LaneMask m) { return _mm512_maskz_loadu_ps(m, from); }
// Lanes l with 0 <= first + l < width.
inline LaneMask lane_mask(std::int64_t first, std::int64_t width) {
  unsigned bits = 0;
  for (std::int64_t l = 0; l < kBlock; ++l) bits |= (first + l >= 0 && first + l < width ? 1u : 0u) << l;
  return static_cast<LaneMask>(bits);
}
// Lane x of the result: lane 2x + kOdd of (a, b) read as one row of 2 * kBlock floats.
template <int kOdd>
inline Vec pick_phase(Vec a, Vec b) {
  const __m512i lanes = _mm512_setr_epi32(kOdd, 2 + kOdd, 4 + kOdd, 6 + kOdd, 8 + kOdd, 10 + kOdd, 12 + kOdd, 14 + kOdd,
                                          16 + kOdd, 18 + kOdd, 20 + kOdd, 22 + kOdd, 24 + kOdd, 26 + kOdd, 28 + kOdd,
                                          30 + kOdd);
  return _mm512_permutex2var_ps(a, lanes, b);
}
#else
using LaneMask = __m256i;
inline Vec masked_load(const float* from, LaneMask m) { return _mm256_maskload_ps(from, m); }
inline LaneMask lane_mask(std::int64_t first, std::int64_t width) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(width - first)), lane),
                          _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(-first - 1))));
}
template <int kOdd>
inline Vec pick_phase(Vec a, Vec b) {  // vshufps takes lanes 2x + kOdd per 128-bit half, vpermpd joins the halves
  const __m256 halves = _mm256_shuffle_ps(a, b, kOdd ? 0xDD : 0x88);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(halves), 0xD8));
}
#endif

// fn.template operator()<i>() for i in [0, kN), as separate statements: indices known at compile
// time, so a strip's accumulators stay in registers.
template <int kN, class Fn>
inline void unrolled(Fn&& fn) {
  [&]<int... kI>(std::integer_sequence<int, kI...>) { (fn.template operator()<kI>(), ...); }(
      std::make_integer_sequence<int, kN>());
}

// One narrow plane's shape, and the masks of its loads. Stride 1: tap column j reads row[first + j
// + x], mask[j]. Stride 2: lane x of tap column j is row[2x + j - pad_w]; the row is read as two
// pairs of vectors from `first` (even) and first + 2, each pair split into its even and odd lanes
// (pick_phase); kPhase = -pad_w - first (0 or 1) says which phase column 0 takes. mask[2p + h]:
// pair p, half h.
struct NarrowPlane {
  std::int64_t h, w, pad_h, out_w, out_plane, first;
  LaneMask mask[4];
  Activation activation;
};

// Output rows [y0, y0 + kStrip) of one channel, summed in the order (i, j) per output, bias last.
template <int kStrip, int kStride, int kPhase>
void narrow_strip(const float* plane, const float* taps, float bias, const NarrowPlane& g, std::int64_t y0,
                  float* out) {
  Vec acc[kStrip];
  for (Vec& a : acc) a = Vec(0.0f);
  const std::int64_t row0 = y0 * kStride - g.pad_h;
  unrolled<(kStrip - 1) * kStride + 3>([&]<int kT>() {
    if (row0 + kT < 0 || row0 + kT >= g.h) return;  // padding rows add nothing
    const float* row = plane + (row0 + kT) * g.w + g.first;
    Vec tap[3];
    if constexpr (kStride == 1) {
      for (int j = 0; j < 3; ++j) tap[j] = masked_load(row + j, g.mask[j]);
    } else {
      const Vec a0 = masked_load(row, g.mask[0]), b0 = masked_load(row + kBlock, g.mask[1]);
      const Vec a1 = masked_load(row + 2, g.mask[2]), b1 = masked_load(row + 2 + kBlock, g.mask[3]);
      tap[0] = pick_phase<kPhase>(a0, b0);
      tap[1] = kPhase == 0 ? pick_phase<1>(a0, b0) : pick_phase<0>(a1, b1);
      tap[2] = pick_phase<kPhase>(a1, b1);
    }
    unrolled<kStrip>([&]<int kY>() {
      constexpr int kI = kT - kY * kStride;  // this input row is kernel row kI of output row y0 + kY
      if constexpr (kI >= 0 && kI < 3)
        for (int j = 0; j < 3; ++j) acc[kY] = xsimd::fma(tap[j], Vec(taps[kI * 3 + j]), acc[kY]);
    });
  });
  for (int y = 0; y < kStrip; ++y) {
    const Vec result = activate_vec(g.activation, acc[y] + Vec(bias));
    store_row_vector(result, out + (y0 + y) * g.out_w, (y0 + y) * g.out_w + kBlock <= g.out_plane, g.out_w);
  }
}

// kNarrowStrips[stride - 1][phase][rows - 1].
template <int kStride, int kPhase>
constexpr auto narrow_strips = []<std::size_t... kR>(std::index_sequence<kR...>) {
  return std::array{&narrow_strip<static_cast<int>(kR) + 1, kStride, kPhase>...};
}(std::make_index_sequence<kRows>());
constexpr std::array kNarrowStrips = {std::array{narrow_strips<1, 0>, narrow_strips<1, 0>},
                                      std::array{narrow_strips<2, 0>, narrow_strips<2, 1>}};
#else
constexpr bool kNarrowPath = false;  // no masked loads: NEON and SSE2 builds copy every plane
#endif

// At batch 32 the input comes from memory, and the hardware prefetcher alone left the narrow path
// waiting on it: each plane read asks for the lines of a plane's worth of input this far on (1-4
// KiB measured alike). Zen 5 VM, batch 32, time / oneDNN's, medians of 3 runs: g576 14 x 14 stride
// 2 1.03 -> 0.60, stride 1 0.73 -> 0.42, g960 7 x 7 0.81 -> 0.69 (narrow); 28 x 28 and 56 x 56 planes
// (copied) 0.45 -> 0.41 (7 runs); batch 1 unchanged (the input in cache).
constexpr std::int64_t kPrefetchBytes = 4096;
// Asks for the cache lines of `floats` floats from kPrefetchBytes past `plane`, none at or past `end`.
// Inlined always: GCC 12 drops the calls of a function of prefetches alone (layout.cpp).
[[gnu::always_inline]] inline void prefetch_ahead(const float* plane, std::int64_t floats, const float* end) {
  const std::int64_t bytes = std::min<std::int64_t>(floats * 4, (end - plane) * 4 - kPrefetchBytes);  // none past end
  const char* from = reinterpret_cast<const char*>(plane);
  for (std::int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(from + kPrefetchBytes + b);
}
// Whether the narrow path takes p (a depthwise problem cpu.07 supports).
bool narrow_plane(const ConvProblem& p) {
  return kNarrowPath && p.r == 3 && p.s == 3 && p.stride_h == p.stride_w && p.out_w() <= kBlock;
}

class DepthwiseRowsConv final : public PlannedConv {
 public:
  DepthwiseRowsConv(const ConvProblem& p, const ConvWeights& w, Epilogue e, int threads)
      : p_(p),
        threads_(threads),
        narrow_(narrow_plane(p)),
        padded_h_(p.padded_h()),
        // Each phase of a padded row holds its share of the row, and is wide enough for a row's
        // last vector to be whole and for a narrow row's copy as one vector (extra columns zero).
        phase_width_(std::max({(p.padded_w() + p.stride_w - 1) / p.stride_w,
                               (p.out_w() + kBlock - 1) / kBlock * kBlock + (p.s - 1) / p.stride_w,
                               p.pad_w + kBlock})),
        geometry_{p.stride_w * phase_width_, phase_width_, p.stride_h, p.out_h(), p.out_w(), p.r, p.s, e.activation},
        taps_(aligned_floats(w.weight.size())),
        bias_(aligned_floats(static_cast<std::size_t>(p.k))) {  // zeroed: no bias
    std::ranges::copy(w.weight, taps_.get());
    std::ranges::copy(w.bias, bias_.get());
  }

  // Two zero-padded planes per thread, + alignment slack; none on the narrow path.
  std::size_t workspace_bytes() const override {
    if (narrow_) return 0;
    return static_cast<std::size_t>(threads_ * 2 * plane_floats()) * sizeof(float) + Tensor::kAlignment;
  }
  std::size_t weight_bytes() const override {
    return static_cast<std::size_t>(p_.k * (p_.r * p_.s + 1)) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    if (narrow_) return run_narrow(input, output);
    const std::int64_t planes = p_.n * p_.c, in_plane = p_.h * p_.w, out_plane = p_.out_h() * p_.out_w();
#pragma omp parallel num_threads(threads_)
    {
      // Two padded buffers per thread, whose borders stay zero (each copy writes the interior): the
      // next plane is copied into one while the other is convolved, so no load reads a store still
      // in flight (an unaligned load over a just-stored vector waits for it: measured 1.3x slower).
      float* buffers = aligned_workspace(workspace) + omp_get_thread_num() * 2 * plane_floats();
      std::fill_n(buffers, 2 * plane_floats(), 0.0f);
      const EvenSplit share(planes, (planes + threads_ - 1) / threads_);
      const int thread = omp_get_thread_num();
      const std::int64_t first = thread < share.parts ? share.begin(thread) : planes;
      const std::int64_t last = thread < share.parts ? first + share.size(thread) : planes;
      if (first < last) copy_plane(input + first * in_plane, buffers);
      for (std::int64_t plane = first; plane < last; ++plane) {
        const float* padded = buffers + (plane - first) % 2 * plane_floats();
        if (plane + 1 < last) copy_plane(input + (plane + 1) * in_plane, buffers + (plane + 1 - first) % 2 * plane_floats());
        prefetch_ahead(input + (plane + 1) * in_plane, in_plane, input + last * in_plane);  // the plane being copied
        const std::int64_t channel = plane % p_.c;
        const float* taps = taps_.get() + channel * p_.r * p_.s;
        const auto& strips = kStrips[p_.stride_w - 1][p_.r == 3 && p_.s == 3];
        for (std::int64_t y0 = 0; y0 < geometry_.out_h; y0 += kRows)
          strips[std::min<std::int64_t>(kRows, geometry_.out_h - y0) - 1](padded, taps, bias_[channel], geometry_, y0,
                                                                     output + plane * out_plane);
      }
    }
  }

 private:
  // The narrow path: each thread its share of the planes, read straight from the input.
  void run_narrow([[maybe_unused]] const float* input, [[maybe_unused]] float* output) const {
#if defined(__AVX2__)
    const std::int64_t planes = p_.n * p_.c, in_plane = p_.h * p_.w, out_h = p_.out_h();
    NarrowPlane g{.h = p_.h, .w = p_.w, .pad_h = p_.pad_h, .out_w = p_.out_w(), .out_plane = out_h * p_.out_w(),
                  .first = p_.stride_w == 1 ? -p_.pad_w : -p_.pad_w - (p_.pad_w % 2), .mask = {},
                  .activation = geometry_.activation};
    const int phase = static_cast<int>(-p_.pad_w - g.first);
    for (int m = 0; m < 4; ++m)
      g.mask[m] = lane_mask(p_.stride_w == 1 ? g.first + m : g.first + m / 2 * 2 + m % 2 * kBlock, p_.w);
    const auto& strips = kNarrowStrips[p_.stride_w - 1][phase];
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t plane = 0; plane < planes; ++plane) {
      const std::int64_t channel = plane % p_.c;
      prefetch_ahead(input + plane * in_plane, in_plane, input + planes * in_plane);
      for (std::int64_t y0 = 0; y0 < out_h; y0 += kRows)
        strips[std::min<std::int64_t>(kRows, out_h - y0) - 1](input + plane * in_plane, taps_.get() + channel * 9,
                                                               bias_[channel], g, y0, output + plane * g.out_plane);
    }
#endif
  }

  std::int64_t plane_floats() const { return padded_h_ * geometry_.row_pitch; }
  // One input plane into a padded buffer's interior, row by row.
  void copy_plane(const float* from, float* padded) const {
    for (std::int64_t y = 0; y < p_.h; ++y) {
      float* to = padded + (y + p_.pad_h) * geometry_.row_pitch;
      if (p_.stride_w == 1) copy_row(from + y * p_.w, to + p_.pad_w);
      else split_row_phases(from + y * p_.w, p_.w, p_.pad_w, phase_width_, to);
    }
  }
  // At stride 1: in vectors (copy_floats); a row narrower than a vector by one masked load, its
  // zeros past the row written into the padding.
  void copy_row(const float* in, float* to) const {
    if (p_.w >= kBlock) copy_floats(in, p_.w, to);
    else load_first(in, p_.w).store_unaligned(to);
  }

  ConvProblem p_;
  int threads_;
  bool narrow_;  // narrow_plane(p_)
  std::int64_t padded_h_, phase_width_;
  PlaneGeometry geometry_;
  std::unique_ptr<float[], detail::AlignedFree> taps_, bias_;  // [C][R][S] as PyTorch's, [C]
};

}  // namespace

std::string depthwise_rows_unsupported(const ConvProblem& p) {
  if (!p.is_depthwise())
    return fmt::format("depthwise only: needs groups == ic == oc (channel multiplier 1), got g{} ic{} oc{}",
                       p.groups, p.c, p.k);
  if (p.stride_w > 2 || p.dilation_h != 1 || p.dilation_w != 1)
    return "stride across 1 or 2 and dilation 1 only: a row's taps must be neighbouring floats of one phase (cpu.05 "
           "takes the rest)";
  return {};
}

std::unique_ptr<PlannedConv> depthwise_rows_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  if (std::string why = depthwise_rows_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.07_depthwise_rows does not support {}: {}", to_string(p), why));
  check_weights(p, w);
  return std::make_unique<DepthwiseRowsConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
