// How the peak is measured:
// - FMA: each thread runs kChains independent FMA chains on SIMD registers. With a 4-cycle FMA
//   latency and 2 FMA pipes, at least 8 chains are needed to keep both pipes busy; 16 leave
//   margin and fit in AVX-512's 32 registers (and in AVX2's 16, where the compiler keeps them).
//   Best of several repetitions: the peak is what the machine can do, not what it usually does.
// - Register tiles: cpu.02's tiles for wide layers (AVX-512: 4 x 7 and 2 x 14) over a 3x3
//   kernel and one block of channels, its input rows and weights (at most ~40 KiB) reused from
//   L1 call after call. The FMAs are the same as the peak loop's; what it adds are the loads (one
//   weight vector per k block and one broadcast per pixel per tap), loop overhead and the tile's
//   setup and stores. So peak -> tile ceiling is what the instruction mix costs on this core, and
//   tile ceiling -> a kernel's rate is what its memory traffic, layout changes and edges cost.
// - Bandwidth: arrays of 256 MiB each, far beyond any cache, touched in parallel with the same
//   static OpenMP schedule as they were first written (so pages sit near their thread).
#include "bench/harness/peak.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <vector>

#include <xsimd/xsimd.hpp>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/microkernel.hpp"

namespace convlab {

namespace {
using Batch = xsimd::batch<float>;
// Independent FMA chains per thread: enough to cover the FMA latency on every pipe (2 pipes x 4-5
// cycles), few enough that they and the two operands stay in registers. AVX2 and SSE have 16
// vector registers: 16 chains + 2 operands spilled, and the probe read half of Zen 3's peak
// (oneDNN then ran a layer at "133% of peak"); 12 leaves room. AVX-512 and NEON have 32.
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int kChains = 16;
#else
constexpr int kChains = 12;
#endif

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `iterations` rounds of kChains FMAs per thread on `threads` threads; returns GFLOP/s.
double fma_gflops(int threads, long iterations) {
  volatile float sink = 0;
  volatile float seed = 1.0f;  // unknown at compile time: the loop cannot be folded away
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    const Batch mul(0.999999f * seed), add(1e-7f * seed);
    std::array<Batch, kChains> acc;
    for (int i = 0; i < kChains; ++i) acc[i] = Batch(static_cast<float>(i) * seed);
    for (long it = 0; it < iterations; ++it)
      for (int i = 0; i < kChains; ++i) acc[i] = xsimd::fma(acc[i], mul, add);
    Batch total(0.0f);
    for (int i = 0; i < kChains; ++i) total += acc[i];
#pragma omp critical
    sink = sink + xsimd::hadd(total);
  }
  const double flops = 2.0 * Batch::size * kChains * static_cast<double>(iterations) * threads;
  return flops / seconds_since(start) / 1e9;
}

// The probes' iterations: about 10 ms of the FMA loop on one thread, as this build runs it,
// at most the 3 million that take that long on the development machines. A sanitizer build runs
// the loops 10-50x slower and an emulated one (qemu) slower still: sized by time, every context line
// costs them what it costs a release build, and their figures mean nothing either way.
long iterations_of_10ms() {
  constexpr long kProbe = 100'000, kMost = 3'000'000;
  fma_gflops(1, kProbe);  // the first run pays for the thread pool and the clocks
  const auto start = std::chrono::steady_clock::now();
  fma_gflops(1, kProbe);
  const double per_iteration = seconds_since(start) / kProbe;
  return std::clamp(static_cast<long>(0.010 / std::max(per_iteration, 1e-12)), kProbe / 10, kMost);
}

double best_fma_gflops(int threads, int repetitions, long iterations) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) best = std::max(best, fma_gflops(threads, iterations));
  return best;
}

}  // namespace

void measure_bandwidth(Peak& peak) {
  const std::int64_t n = (256 << 20) / sizeof(float);  // a multiple of two SIMD widths
  auto a = aligned_floats(n), b = aligned_floats(n), c = aligned_floats(n);
  float *pa = a.get(), *pb = b.get(), *pc = c.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    pa[i] = 0.0f;
    pb[i] = 1.0f;
    pc[i] = 2.0f;
  }
  for (int r = 0; r < 5; ++r) {
    double sum = 0;
    auto start = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sum)
    {
      Batch acc0(0.0f), acc1(0.0f);  // two chains, so the adds keep up with the loads
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < n; i += 2 * Batch::size) {
        acc0 += Batch::load_aligned(pb + i);
        acc1 += Batch::load_aligned(pb + i + Batch::size);
      }
      sum += xsimd::hadd(acc0 + acc1);
    }
    peak.read_gbs = std::max(peak.read_gbs, n * sizeof(float) / seconds_since(start) / 1e9);
    start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; i += Batch::size)
      xsimd::fma(Batch(3.0f), Batch::load_aligned(pc + i), Batch::load_aligned(pb + i)).store_aligned(pa + i);
    peak.triad_gbs = std::max(peak.triad_gbs, 3.0 * n * sizeof(float) / seconds_since(start) / 1e9);
    if (sum < 0) peak.read_gbs = 0;  // keeps the sum alive; never true
  }
}

namespace {

// One call of the tile, as cpu.02 makes it: its own function, the accumulators stored at the end
// (cpu.02's epilogue stores them too). Inlined into the timing loop, GCC kept 14 of the 2 x 14
// tile's 28 FMA operands on the stack there, which cpu.02's tile does not (0), and the ceiling
// read 65-71% of the FMA peak where the tile itself reaches 97-99% (Zen 5 VM, bench/RESULTS.md).
template <int kTile, int kKBlocks>
[[gnu::noinline]] void tile_call(const float* in, const float* w, const cpu::TileGeometry& g, float* out) {
  using namespace cpu;
  Vec acc[kKBlocks][kTile];
  accumulate<kTile, kKBlocks, 1, 3>(acc, in, w, g);
  CONVLAB_TILE_LOOP_GCC_TOO
  for (int kb = 0; kb < kKBlocks; ++kb) {
    CONVLAB_TILE_LOOP_GCC_TOO
    for (int x = 0; x < kTile; ++x) {
      float* o = out + (kb * kTile + x) * kBlock;
      (Vec::load_aligned(o) + acc[kb][x]).store_aligned(o);
    }
  }
}

template <int kKBlocks>
TileRun tile_run(int threads, long calls) {
  using namespace cpu;
  constexpr int kTile = max_tile_width(kKBlocks);
  constexpr std::int64_t kTaps = 3, kWidth = 4 * kTile + kTaps - 1;  // four tiles of one padded row
  const std::int64_t in_floats = kTaps * kWidth * kBlock, w_floats = kKBlocks * kBlock * kTaps * kTaps * kBlock;
  const TileGeometry g{.channels = kBlock, .r = kTaps, .s = kTaps, .in_block_stride = in_floats,
                       .in_tap_row = kWidth * kBlock, .in_tap_col = kBlock, .in_pixel = kBlock,
                       .w_block_stride = kBlock * kTaps * kTaps * kBlock};
  constexpr float kIn = 1.0f / 1024, kWeight = 1.0f / 512;  // powers of two: exact products
  double sum = 0;
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    auto in = aligned_floats(in_floats), w = aligned_floats(w_floats), out = aligned_floats(kKBlocks * kTile * kBlock);
    std::fill(in.get(), in.get() + in_floats, kIn);
    std::fill(w.get(), w.get() + w_floats, kWeight);
    std::fill(out.get(), out.get() + kKBlocks * kTile * kBlock, 0.0f);
    // The instantiation cpu.02 runs on 3 x 3 layers (the kSide 3 tap loops): the run-time tap
    // loops compiled differently and hid that GCC folded the AVX2 tile's weight loads (kernel-notes.md).
    for (long i = 0; i < calls; ++i) tile_call<kTile, kKBlocks>(in.get() + (i % 4) * kTile * kBlock, w.get(), g, out.get());
    double total = 0;  // every accumulator stored and summed, so no FMA can be dropped
    for (int j = 0; j < kKBlocks * kTile * kBlock; ++j) total += out[j];
#pragma omp critical
    sum += total;
  }
  const double seconds = seconds_since(start);
  const double macs = static_cast<double>(kBlock) * kKBlocks * kTile * kBlock * kTaps * kTaps * calls * threads;
  return {.gflops = 2 * macs / seconds / 1e9, .sum = sum, .expected_sum = macs * kIn * kWeight};
}
}  // namespace

TileRun register_tile_run(int k_blocks, int threads, long calls) {
  if (k_blocks == cpu::kMaxKBlocks) return tile_run<cpu::kMaxKBlocks>(threads, calls);
  if (k_blocks == 2) return tile_run<2>(threads, calls);
  throw InputError(fmt::format("register tile: {} k blocks is not measured (2 or {})", k_blocks, cpu::kMaxKBlocks));
}

std::vector<std::string> peak_warnings(const Peak& p, double busy_before, double busy_after) {
  std::vector<std::string> w;
  if (const double busy = std::max(busy_before, busy_after); busy > 0.25)
    w.push_back(fmt::format("other work kept {:.2f} cores busy around the measurement (before {:.2f}, after {:.2f}): "
                            "the figures are lower than this machine's peak",
                            busy, busy_before, busy_after));
  if (p.threads > 1 && p.gflops_all < 1.1 * p.gflops_one)
    w.push_back(fmt::format("{} threads were not faster than one ({:.1f} against {:.1f} GFLOP/s): the cores were "
                            "shared with other work, so the all-threads figure is not this machine's peak",
                            p.threads, p.gflops_all, p.gflops_one));
  for (const TileCeiling& t : p.tiles)
    if (t.gflops_one > 1.02 * p.gflops_one || t.gflops_all > 1.02 * p.gflops_all) {
      w.push_back(fmt::format("the {} x {} tile ran above the FMA peak ({:.1f} / {:.1f} GFLOP/s against {:.1f} / "
                              "{:.1f}): the FMA loop met a busier moment, and its figure is too low",
                              t.k_blocks, t.pixels, t.gflops_one, t.gflops_all, p.gflops_one, p.gflops_all));
      break;
    }
  return w;
}

double parallel_region_us(int threads, int regions) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(regions));
  // Each thread writes its own cache line, so the compiler keeps the region and no line moves between cores.
  std::vector<std::array<int, 16>> touched(static_cast<std::size_t>(threads), std::array<int, 16>{});
  for (int i = 0; i < regions; ++i) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    touched[static_cast<std::size_t>(omp_get_thread_num())][0] += 1;
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::ranges::nth_element(us, us.begin() + regions / 2);
  return us[static_cast<std::size_t>(regions / 2)];
}

std::vector<int> peak_thread_counts(int all_threads) {
  return all_threads > 1 ? std::vector<int>{1, all_threads} : std::vector<int>{1};
}

void keep_best(double value, int threads, int all_threads, double& one, double& all) {
  if (threads == 1) one = std::max(one, value);
  if (threads == all_threads) all = std::max(all, value);
}

Peak measure_peak(bool quick) {
  Peak peak;
  peak.simd_lanes = static_cast<int>(Batch::size);
  peak.threads = omp_get_max_threads();
  // Long enough that thread wake-up and clock reads vanish: ~10 ms (quick) or ~100 ms per repetition,
  // sized by time on this build.
  const long iterations = iterations_of_10ms() * (quick ? 1 : 10);
  best_fma_gflops(peak.threads, 1, iterations / 4);  // wake the thread pool and the clocks
  if (quick) {
    peak.gflops_one = best_fma_gflops(1, 3, iterations);
    peak.gflops_all = best_fma_gflops(peak.threads, 3, iterations);
    measure_int8_peak(peak, iterations / 2, 3);
    return peak;
  }
  // The widest tile, then 2 k blocks where that is another tile (without AVX-512 both are 2 x 6:
  // the loop used to break before measuring either, and AVX2 builds showed no tile at all).
  for (const int k_blocks : {cpu::kMaxKBlocks, 2}) {
    if (k_blocks == 2 && cpu::kMaxKBlocks == 2 && !peak.tiles.empty()) break;
    peak.tiles.push_back({.k_blocks = k_blocks, .pixels = cpu::max_tile_width(k_blocks)});
  }
  // Repetitions interleave the FMA loop and the tiles, so that a busy spell of the machine (these
  // are shared) falls on all of them alike rather than on whichever ran then; best of each.
  for (int r = 0; r < 5; ++r)
    for (const int threads : peak_thread_counts(peak.threads)) {
      keep_best(fma_gflops(threads, iterations), threads, peak.threads, peak.gflops_one, peak.gflops_all);
      for (TileCeiling& t : peak.tiles) {
        // As many FMAs as the peak loop's: a tile does channels x 9 taps x its accumulators.
        const long calls = iterations * kChains / (cpu::kBlock * 9 * t.k_blocks * t.pixels);
        keep_best(register_tile_run(t.k_blocks, threads, calls).gflops, threads, peak.threads, t.gflops_one,
                  t.gflops_all);
      }
    }
  measure_int8_peak(peak, iterations / 2, 5);
  if (peak.threads > 1) peak.parallel_region_us = parallel_region_us(peak.threads, 2000);
  measure_bandwidth(peak);
  return peak;
}

nlohmann::json to_json(const Peak& peak) {
  nlohmann::json j = {{"simd_lanes", peak.simd_lanes},
                      {"threads", peak.threads},
                      {"fma_gflops_one_thread", peak.gflops_one},
                      {"fma_gflops_all_threads", peak.gflops_all}};
  if (peak.gflops_all_after > 0) j["fma_gflops_all_threads_after"] = peak.gflops_all_after;
  for (const TileCeiling& t : peak.tiles)
    j["register_tiles"].push_back({{"k_blocks", t.k_blocks},
                                   {"pixels", t.pixels},
                                   {"gflops_one_thread", t.gflops_one},
                                   {"gflops_all_threads", t.gflops_all}});
  if (peak.int8_gops_all > 0) {
    j["int8_instruction"] = peak.int8_instruction;
    j["int8_gops_one_thread"] = peak.int8_gops_one;
    j["int8_gops_all_threads"] = peak.int8_gops_all;
    if (peak.int8_gops_all_after > 0) j["int8_gops_all_threads_after"] = peak.int8_gops_all_after;
    j["int16_pair_gops_one_thread"] = peak.int16_pair_gops_one;
    j["int16_pair_gops_all_threads"] = peak.int16_pair_gops_all;
  }
  if (peak.parallel_region_us > 0) j["parallel_region_us"] = peak.parallel_region_us;
  if (peak.read_gbs > 0) {
    j["read_gbs"] = peak.read_gbs;
    j["triad_gbs"] = peak.triad_gbs;
  }
  return j;
}

}  // namespace convlab
