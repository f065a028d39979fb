// The int8 probes of `convlab peak` (bench/harness/peak.hpp): like the FMA probe, independent
// accumulator chains per thread on SIMD registers, best of several repetitions.
// - int8 peak: the fastest int8 multiply-accumulate this build's ISA has: VNNI's vpdpbusd (u8 x s8,
//   four products into each int32 lane, one instruction), else vpmaddubsw + vpmaddwd + vpaddd (the
//   same four products in three instructions, the int16 pair sums saturating: what libraries use
//   without VNNI). Counted as 2 ops per multiply-add, as FLOPs are.
// - int16 pairs: vpmaddwd + vpaddd, two exact products per lane: cpu.21's instruction pair.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <utility>

#include "bench/harness/peak.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace convlab {

namespace {

// Independent accumulator chains: enough to cover the multiply's latency on every pipe, few
// enough to stay in registers with the operands. Which count is fastest is measured, not fixed:
// on a Zen 5, 12 chains of vpdpbusd run at twice the rate of 16 (2026-12-02).
#if defined(__AVX512BW__)
constexpr int kChainCounts[] = {8, 12, 16};
#else
constexpr int kChainCounts[] = {6, 8, 10};
#endif

#if defined(__AVX512BW__)
using V = __m512i;
constexpr int kLanes = 16;
V splat(std::int32_t v) { return _mm512_set1_epi32(v); }
V add(V a, V b) { return _mm512_add_epi32(a, b); }
V pairs(V acc, V a, V b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
#if defined(__AVX512VNNI__)
constexpr const char* kInt8Instruction = "vpdpbusd (AVX-512 VNNI)";
V quads(V acc, V a, V b, V) { return _mm512_dpbusd_epi32(acc, a, b); }
#else
constexpr const char* kInt8Instruction = "vpmaddubsw + vpmaddwd + vpaddd (AVX-512BW, no VNNI: saturating pairs)";
V quads(V acc, V a, V b, V ones) { return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), ones)); }
#endif
std::int64_t reduce(V v) {  // not _mm512_reduce_add_epi32, which GCC 12 warns about inside its own header
  alignas(64) std::int32_t lanes[kLanes];
  _mm512_store_si512(lanes, v);
  std::int64_t sum = 0;
  for (const std::int32_t x : lanes) sum += x;
  return sum;
}
#elif defined(__AVX2__)
using V = __m256i;
constexpr int kLanes = 8;
V splat(std::int32_t v) { return _mm256_set1_epi32(v); }
V add(V a, V b) { return _mm256_add_epi32(a, b); }
V pairs(V acc, V a, V b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
#if defined(__AVXVNNI__)
constexpr const char* kInt8Instruction = "vpdpbusd (AVX-VNNI)";
V quads(V acc, V a, V b, V) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
#else
constexpr const char* kInt8Instruction = "vpmaddubsw + vpmaddwd + vpaddd (AVX2, no VNNI: saturating pairs)";
V quads(V acc, V a, V b, V ones) { return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones)); }
#endif
std::int64_t reduce(V v) {
  alignas(32) std::int32_t lanes[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  std::int64_t sum = 0;
  for (const std::int32_t x : lanes) sum += x;
  return sum;
}
#endif

#if defined(__AVX2__)
// Runs `iterations` rounds of kChains multiply-accumulates per thread; returns GOP/s counting the
// multiply-adds per int32 lane of one sequence (4, or 2 for pairs), 2 ops each.
template <bool kQuads, int kChains>
double int8_gops(int threads, long iterations) {
  volatile std::int32_t seed = 0x01020304;  // unknown at compile time: nothing is folded away
  volatile std::int64_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    V a = splat(seed), b = splat(seed ^ 0x7f7f), ones = splat(0x00010001);
    V acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = splat(i * seed);
    for (long it = 0; it < iterations; ++it) {
      // An empty asm that "changes" an operand before each chain's multiply (it emits no
      // instruction): without it the compiler hoists vpmaddubsw and vpmaddwd of constant operands
      // out of the loop (the probe timed additions: 5x the FP32 peak), and with it once per round
      // it computes the one product all chains share and adds it to each (3.9x, 2026-12-04).
      // Only vpdpbusd, which reads its accumulator, needed neither.
      for (int i = 0; i < kChains; ++i) {
        asm volatile("" : "+v"(a), "+v"(b));
        acc[i] = kQuads ? quads(acc[i], a, b, ones) : pairs(acc[i], a, b);
      }
    }
    V total = acc[0];
    for (int i = 1; i < kChains; ++i) total = add(total, acc[i]);
#pragma omp critical
    sink = sink + reduce(total);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double products = kQuads ? 4 : 2;
  return 2 * products * kLanes * kChains * static_cast<double>(iterations) * threads / seconds / 1e9;
}

// The best over the chain counts, the same number of instructions each.
template <bool kQuads>
double int8_gops(int threads, long iterations) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::max({int8_gops<kQuads, kChainCounts[I]>(threads, iterations * kChainCounts[0] / kChainCounts[I])...});
  }(std::make_index_sequence<std::size(kChainCounts)>{});
}
#endif

}  // namespace

void measure_int8_peak(Peak& peak, long iterations, int repetitions) {
#if defined(__AVX2__)
  peak.int8_instruction = kInt8Instruction;
  for (int r = 0; r < repetitions; ++r)
    for (const int threads : peak_thread_counts(peak.threads)) {
      keep_best(int8_gops<true>(threads, iterations), threads, peak.threads, peak.int8_gops_one, peak.int8_gops_all);
      keep_best(int8_gops<false>(threads, iterations), threads, peak.threads, peak.int16_pair_gops_one,
                peak.int16_pair_gops_all);
    }
#else
  (void)peak, (void)iterations, (void)repetitions;  // no int8 probe for this ISA yet: figures stay 0
#endif
}

}  // namespace convlab
