// The int8 kernels' integer vector, one per build: kLanes int32 lanes, loaded as int16 pairs
// (madd_add: vpmaddwd, two exact int16 products per lane) or as int32, and the requantisation of
// kernels/common/quantize.hpp on a whole vector, bit for bit the scalar oracle's: convert, FMA,
// clamp to +-kRequantLimit, round half to even (the MXCSR default), add the zero point, clamp.
// AVX-512BW, AVX2, and a portable form (NEON, SSE2) on arrays with the scalar arithmetic.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/common/quantize.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
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
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  const __m512 limit = _mm512_set1_ps(kRequantLimit);
  __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(m), _mm512_loadu_ps(o));
  y = _mm512_min_ps(_mm512_max_ps(y, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit);
  const IVec q = _mm512_add_epi32(_mm512_cvtps_epi32(y), zp);  // rounds half to even (MXCSR default)
  _mm512_storeu_si512(out, _mm512_min_epi32(_mm512_max_epi32(q, lo), hi));
}
#elif defined(__AVX2__)
constexpr int kLanes = 8;
using IVec = __m256i;
inline IVec zero() { return _mm256_setzero_si256(); }
inline IVec splat(std::int32_t v) { return _mm256_set1_epi32(v); }
inline IVec load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline IVec madd_add(IVec acc, IVec a, IVec b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  const __m256 limit = _mm256_set1_ps(kRequantLimit);
  __m256 y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(m), _mm256_loadu_ps(o));
  y = _mm256_min_ps(_mm256_max_ps(y, _mm256_sub_ps(_mm256_setzero_ps(), limit)), limit);
  const IVec q = _mm256_add_epi32(_mm256_cvtps_epi32(y), zp);  // rounds half to even (MXCSR default)
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_min_epi32(_mm256_max_epi32(q, lo), hi));
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
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  for (int l = 0; l < kLanes; ++l) {
    out[l] = requantize_one(acc.v[l], m[l], o[l], zp.v[l], lo.v[l], hi.v[l]);
  }
}
#endif

}  // namespace convlab::cpu::int8
