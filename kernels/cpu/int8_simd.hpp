// The int8 kernels' integer vector, one per build: kLanes int32 lanes, loaded as int16 pairs
// (madd_add: vpmaddwd, two exact int16 products per lane), as u8 x s8 quads (dot4_add: VNNI's
// vpdpbusd, four exact products per lane; without VNNI the same sums from two vpmaddwd on the
// bytes widened in place, so the kernels that use it give the same bytes on every build) or as
// int32, and the requantisation of
// kernels/common/quantize.hpp on a whole vector, bit for bit the scalar oracle's: convert, FMA,
// clamp to +-kRequantLimit, round half to even (the MXCSR default), add the zero point, clamp.
// AVX-512BW, AVX2, and a portable form (NEON, SSE2) on arrays with the scalar arithmetic.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/common/quantize.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace convlab::cpu::int8 {

// The integer vector of this build: kLanes int32 lanes (accumulators).
#if defined(__AVX512BW__)
constexpr int kLanes = 16;
using IVec = __m512i;
inline IVec zero() { return _mm512_setzero_si512(); }
inline IVec splat(std::int32_t v) { return _mm512_set1_epi32(v); }
inline IVec load(const void* p) { return _mm512_loadu_si512(p); }
inline IVec madd_add(IVec acc, IVec a, IVec b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
inline IVec sub(IVec a, IVec b) { return _mm512_sub_epi32(a, b); }
#if defined(__AVX512VNNI__)
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) { return _mm512_dpbusd_epi32(acc, a_u8, b_s8); }
#else
// Bytes 0 and 2 of each lane as int16 (u8 zero-, s8 sign-extended), then bytes 1 and 3: two exact
// pair sums (at most 2 * 255 * 128).
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) {
  const IVec a_even = _mm512_and_si512(a_u8, _mm512_set1_epi16(0x00ff)), a_odd = _mm512_srli_epi16(a_u8, 8);
  const IVec b_even = _mm512_srai_epi16(_mm512_slli_epi16(b_s8, 8), 8), b_odd = _mm512_srai_epi16(b_s8, 8);
  return _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(a_even, b_even), _mm512_madd_epi16(a_odd, b_odd)));
}
#endif
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  const __m512 limit = _mm512_set1_ps(kRequantLimit);
  __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(m), _mm512_loadu_ps(o));
  y = _mm512_min_ps(_mm512_max_ps(y, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit);
  const IVec q = _mm512_add_epi32(_mm512_cvtps_epi32(y), zp);  // rounds half to even (MXCSR default)
  _mm512_storeu_si512(out, _mm512_min_epi32(_mm512_max_epi32(q, lo), hi));
}
// The same, the kLanes results as bytes (they are in [0, 255] after the clamp).
inline void requantize_bytes(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::uint8_t* out) {
  alignas(64) std::int32_t q[kLanes];
  requantize(acc, m, o, zp, lo, hi, q);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(_mm512_load_si512(q)));
}
#elif defined(__AVX2__)
constexpr int kLanes = 8;
using IVec = __m256i;
inline IVec zero() { return _mm256_setzero_si256(); }
inline IVec splat(std::int32_t v) { return _mm256_set1_epi32(v); }
inline IVec load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline IVec madd_add(IVec acc, IVec a, IVec b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
inline IVec sub(IVec a, IVec b) { return _mm256_sub_epi32(a, b); }
#if defined(__AVXVNNI__)
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) { return _mm256_dpbusd_avx_epi32(acc, a_u8, b_s8); }
#else
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) {  // as the AVX-512BW form
  const IVec a_even = _mm256_and_si256(a_u8, _mm256_set1_epi16(0x00ff)), a_odd = _mm256_srli_epi16(a_u8, 8);
  const IVec b_even = _mm256_srai_epi16(_mm256_slli_epi16(b_s8, 8), 8), b_odd = _mm256_srai_epi16(b_s8, 8);
  return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(a_even, b_even), _mm256_madd_epi16(a_odd, b_odd)));
}
#endif
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  const __m256 limit = _mm256_set1_ps(kRequantLimit);
  __m256 y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(m), _mm256_loadu_ps(o));
  y = _mm256_min_ps(_mm256_max_ps(y, _mm256_sub_ps(_mm256_setzero_ps(), limit)), limit);
  const IVec q = _mm256_add_epi32(_mm256_cvtps_epi32(y), zp);  // rounds half to even (MXCSR default)
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_min_epi32(_mm256_max_epi32(q, lo), hi));
}
inline void requantize_bytes(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::uint8_t* out) {
  alignas(32) std::int32_t q[kLanes];
  requantize(acc, m, o, zp, lo, hi, q);
  const __m256i words = _mm256_packus_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(q)), _mm256_setzero_si256());
  const __m256i bytes = _mm256_packus_epi16(words, _mm256_setzero_si256());  // q0-3 in lane 0, q4-7 in lane 1
  const std::int32_t low = _mm256_cvtsi256_si32(bytes), high = _mm256_extract_epi32(bytes, 4);
  std::memcpy(out, &low, 4);
  std::memcpy(out + 4, &high, 4);
}
#else
// Portable: the same steps on arrays the compiler may vectorise (NEON, SSE2), with the oracle's
// scalar requantisation.
constexpr int kLanes = 8;
struct IVec {
  std::int32_t v[kLanes];
};
inline IVec zero() { return {}; }
inline IVec splat(std::int32_t v) {
  IVec r;
  for (std::int32_t& x : r.v) x = v;
  return r;
}
inline IVec load(const void* p) {
  IVec r;
  std::memcpy(r.v, p, sizeof r.v);
  return r;
}
inline IVec madd_add(IVec acc, IVec a, IVec b) {
  for (int l = 0; l < kLanes; ++l) {
    std::int16_t x[2], w[2];
    std::memcpy(x, &a.v[l], 4);
    std::memcpy(w, &b.v[l], 4);
    acc.v[l] += x[0] * w[0] + x[1] * w[1];
  }
  return acc;
}
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) {
  for (int l = 0; l < kLanes; ++l) {
    std::uint8_t x[4];
    std::int8_t w[4];
    std::memcpy(x, &a_u8.v[l], 4);
    std::memcpy(w, &b_s8.v[l], 4);
    for (int j = 0; j < 4; ++j) acc.v[l] += x[j] * w[j];
  }
  return acc;
}
inline IVec sub(IVec a, IVec b) {
  for (int l = 0; l < kLanes; ++l) a.v[l] -= b.v[l];
  return a;
}
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  for (int l = 0; l < kLanes; ++l) {
    out[l] = requantize_one(acc.v[l], m[l], o[l], zp.v[l], lo.v[l], hi.v[l]);
  }
}
inline void requantize_bytes(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::uint8_t* out) {
  for (int l = 0; l < kLanes; ++l) out[l] = static_cast<std::uint8_t>(requantize_one(acc.v[l], m[l], o[l], zp.v[l], lo.v[l], hi.v[l]));
}
#endif

// 16 rows of 16 bytes (`stride` apart) to 16 columns (`out_stride` apart): a layout change
// between channels-major and pixels-major. SSE2: four rounds of the perfect shuffle, each
// interleaving row i with row i + 8; elsewhere a plain loop.
inline void transpose_16x16(const std::uint8_t* in, std::int64_t stride, std::uint8_t* out, std::int64_t out_stride) {
#if defined(__SSE2__)
  __m128i v[16], t[16];
  for (int i = 0; i < 16; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * stride));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) t[2 * i] = _mm_unpacklo_epi8(v[i], v[i + 8]), t[2 * i + 1] = _mm_unpackhi_epi8(v[i], v[i + 8]);
    for (int i = 0; i < 16; ++i) v[i] = t[i];
  }
  for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j * out_stride), v[j]);
#else
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) out[j * out_stride + i] = in[i * stride + j];
#endif
}

}  // namespace convlab::cpu::int8
