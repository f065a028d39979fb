// The int8 kernels' integer vector, one per build: kLanes int32 lanes, loaded as int16 pairs
// (madd_add: vpmaddwd, two exact int16 products per lane), as u8 x s8 quads (dot4_add: VNNI's
// vpdpbusd, four exact products per lane; without VNNI the same sums from two vpmaddwd on the
// bytes widened in place, so the kernels that use it give the same bytes on every build) or as
// int32, and the requantisation of
// kernels/common/quantize.hpp on a whole vector, bit for bit the scalar oracle's: convert, FMA,
// clamp (in float, once: requantize_vec), round half to even (the MXCSR default), add the zero point.
// AVX-512BW, AVX2, and a portable form (NEON, SSE2) on arrays with the scalar arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "kernels/common/quantize.hpp"
#include "kernels/cpu/tile_loop.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace convlab::cpu::int8 {

// One u8 quad: bytes src[0..3][at] as one word, src[0] in the low byte (vpdpbusd's order).
inline std::int32_t quad_word(const std::uint8_t* const (&src)[4], std::int64_t at) {
  return static_cast<std::int32_t>(std::uint32_t{src[0][at]} | std::uint32_t{src[1][at]} << 8 |
                                   std::uint32_t{src[2][at]} << 16 | std::uint32_t{src[3][at]} << 24);
}

// The integer vector of this build: kLanes int32 lanes (accumulators).
#if defined(__AVX512BW__)
constexpr int kLanes = 16;
using IVec = __m512i;
inline IVec zero() { return _mm512_setzero_si512(); }
inline IVec splat(std::int32_t v) { return _mm512_set1_epi32(v); }
inline IVec load(const void* p) { return _mm512_loadu_si512(p); }
inline IVec madd_add(IVec acc, IVec a, IVec b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
inline IVec sub(IVec a, IVec b) { return _mm512_sub_epi32(a, b); }
#if defined(__AVX512VNNI__) && defined(__GNUC__) && !defined(__clang__)
// The instruction itself: with the intrinsic, GCC 12 keeps a tile's accumulators on the stack
// when its loads are at offsets read from a table (cpu.24: a store and two moves per vpdpbusd,
// 87 instructions per 24 of them); with the accumulator a "+v" operand, 39.
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a_u8), "v"(b_s8));
  return acc;
}
#elif defined(__AVX512VNNI__)
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) { return _mm512_dpbusd_epi32(acc, a_u8, b_s8); }
#else
// Bytes 0 and 2 of each lane as int16 (u8 zero-, s8 sign-extended), then bytes 1 and 3: two exact
// pair sums (at most 2 * 255 * 128).
inline IVec dot4_add(IVec acc, IVec a_u8, IVec b_s8) {
  const IVec a_even = _mm512_and_si512(a_u8, _mm512_set1_epi16(0x00ff)), a_odd = _mm512_srli_epi16(a_u8, 8);
  const IVec b_even = _mm512_srai_epi16(_mm512_slli_epi16(b_s8, 8), 8), b_odd = _mm512_srai_epi16(b_s8, 8);
  return _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(a_even, b_even), _mm512_madd_epi16(a_odd, b_odd)));
}
#define CONVLAB_INT8_SEVEN_BIT_PATH 1  // dot4_add_7bit below
#endif
// The requantisation of kLanes accumulators, each lane's multiplier and offset in m and o:
// int32 results in [lo, hi]. requantize and requantize_channel below load or splat them.
// One clamp, in float, to [lo - zp, hi - zp], stands for the oracle's two (to +-kRequantLimit,
// then to [lo, hi] after adding zp): the bounds are integers, so rounding keeps a value inside
// them and a value beyond them ends on the bound either way. Two instructions fewer per vector:
// cpu.24's epilogue took a third of a first layer's time (C = 3: 9 vpdpbusd per vector).
inline IVec requantize_vec(IVec acc, __m512 m, __m512 o, IVec zp, IVec lo, IVec hi) {
  const __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), m, o);
  const __m512 below = _mm512_cvtepi32_ps(_mm512_sub_epi32(lo, zp)), above = _mm512_cvtepi32_ps(_mm512_sub_epi32(hi, zp));
  const __m512 clamped = _mm512_min_ps(_mm512_max_ps(y, below), above);
  return _mm512_add_epi32(_mm512_cvtps_epi32(clamped), zp);  // rounds half to even (MXCSR default)
}
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  _mm512_storeu_si512(out, requantize_vec(acc, _mm512_loadu_ps(m), _mm512_loadu_ps(o), zp, lo, hi));
}
// The same, the kLanes results as bytes (they are in [0, 255] after the clamp).
inline void requantize_bytes(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::uint8_t* out) {
  alignas(64) std::int32_t q[kLanes];
  requantize(acc, m, o, zp, lo, hi, q);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(_mm512_load_si512(q)));
}
// The requantisation of kLanes accumulators of one output channel (one multiplier, one offset):
// int32 results in [lo, hi].
inline IVec requantize_channel(IVec acc, float m, float o, IVec zp, IVec lo, IVec hi) {
  return requantize_vec(acc, _mm512_set1_ps(m), _mm512_set1_ps(o), zp, lo, hi);
}
// Lanes [from, from + count) of q (values in [0, 255]) as `count` bytes at out: a permute moves
// them to the front (vpermd), a masked vpmovdb stores them; a whole vector is one store.
inline void store_bytes(IVec q, int from, int count, std::uint8_t* out) {
  if (from == 0 && count == kLanes) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(q));
    return;
  }
  if (from != 0) q = _mm512_permutexvar_epi32(_mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(from)), q);
  _mm512_mask_cvtepi32_storeu_epi8(out, static_cast<__mmask16>((1u << count) - 1), q);
}
#if defined(__AVX512VBMI__)
// gather_quads' byte permutes: byte 4 l + j of the result is row j's byte l * stride, the rows'
// bytes 16 (stride 1) or 32 (stride 2) apart in the permuted registers.
template <int kStride>
inline constexpr auto kQuadBytes = [] {
  std::array<std::uint8_t, 64> index{};
  for (int b = 0; b < 64; ++b) index[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(16 * kStride * (b % 4) + kStride * (b / 4));
  return index;
}();
#endif
// kLanes words, word l = bytes src[j][(x + l) * stride] for j = 0..3 (byte j of the word): the
// u8 quads of kLanes neighbouring pixels, from four byte rows. Reads kLanes * stride bytes of
// each row from x * stride (stride 1 and 2 in vectors, others a byte at a time).
inline IVec gather_quads(const std::uint8_t* const (&src)[4], std::int64_t x, std::int64_t stride) {
#if defined(__AVX512VBMI__)
  // The four rows' bytes side by side in registers, then one byte permute to quads: 6-7
  // instructions where the widening below takes 16 (the packing was a sixth of a 16 x 16 layer).
  if (stride == 1) {
    IVec rows = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[0] + x)));
    // The lane is an immediate: spelled out, as clang refuses a loop variable there.
    rows = _mm512_inserti32x4(rows, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[1] + x)), 1);
    rows = _mm512_inserti32x4(rows, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[2] + x)), 2);
    rows = _mm512_inserti32x4(rows, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[3] + x)), 3);
    return _mm512_permutexvar_epi8(_mm512_loadu_si512(kQuadBytes<1>.data()), rows);
  }
  if (stride == 2) {  // 32 bytes of each row, the even ones kept: rows 0-1 in one register, 2-3 in the other
    const auto row = [&](int j) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[j] + 2 * x)); };
    const IVec low = _mm512_inserti64x4(_mm512_castsi256_si512(row(0)), row(1), 1);
    const IVec high = _mm512_inserti64x4(_mm512_castsi256_si512(row(2)), row(3), 1);
    return _mm512_permutex2var_epi8(low, _mm512_loadu_si512(kQuadBytes<2>.data()), high);
  }
#endif
  IVec word = zero();
  for (int j = 0; j < 4; ++j) {
    __m128i bytes;
    if (stride == 1) {
      bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[j] + x));
    } else if (stride == 2) {  // vpmovwb keeps each word's low byte: the even columns
      bytes = _mm256_cvtepi16_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[j] + 2 * x)));
    } else {
      alignas(16) std::uint8_t b[kLanes];
      for (int l = 0; l < kLanes; ++l) b[l] = src[j][(x + l) * stride];
      bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(b));
    }
    word = _mm512_or_si512(word, _mm512_slli_epi32(_mm512_cvtepu8_epi32(bytes), 8 * j));
  }
  return word;
}
inline void store(void* p, IVec v) { _mm512_storeu_si512(p, v); }
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
#define CONVLAB_INT8_SEVEN_BIT_PATH 1  // dot4_add_7bit below
#endif
inline IVec requantize_vec(IVec acc, __m256 m, __m256 o, IVec zp, IVec lo, IVec hi) {  // as the AVX-512 form
  const __m256 y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), m, o);
  const __m256 below = _mm256_cvtepi32_ps(_mm256_sub_epi32(lo, zp)), above = _mm256_cvtepi32_ps(_mm256_sub_epi32(hi, zp));
  const __m256 clamped = _mm256_min_ps(_mm256_max_ps(y, below), above);
  return _mm256_add_epi32(_mm256_cvtps_epi32(clamped), zp);  // rounds half to even (MXCSR default)
}
inline IVec requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi) {
  return requantize_vec(acc, _mm256_loadu_ps(m), _mm256_loadu_ps(o), zp, lo, hi);
}
inline void requantize(IVec acc, const float* m, const float* o, IVec zp, IVec lo, IVec hi, std::int32_t* out) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), requantize(acc, m, o, zp, lo, hi));
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
inline IVec requantize_channel(IVec acc, float m, float o, IVec zp, IVec lo, IVec hi) {
  return requantize_vec(acc, _mm256_set1_ps(m), _mm256_set1_ps(o), zp, lo, hi);
}
// The low `count` (at most 8) bytes of `bytes` at out: one 8-byte store, or at most three (4, 2 and
// 1 bytes). A byte loop there became a memcpy call, and around the call GCC kept the caller's whole
// epilogue (constants, accumulators) on the stack.
inline void store_low_bytes(std::uint64_t bytes, std::int64_t count, std::uint8_t* out) {
  if (count == 8) {
    std::memcpy(out, &bytes, 8);
    return;
  }
  std::uint64_t rest = bytes;
  if (count & 4) {
    const auto four = static_cast<std::uint32_t>(rest);
    std::memcpy(out, &four, 4);
    out += 4, rest >>= 32;
  }
  if (count & 2) {
    const auto two = static_cast<std::uint16_t>(rest);
    std::memcpy(out, &two, 2);
    out += 2, rest >>= 16;
  }
  if (count & 1) *out = static_cast<std::uint8_t>(rest);
}
// Packed to bytes in lane order (the values are in [0, 255]), lanes [from, from + count) stored.
inline void store_bytes(IVec q, int from, int count, std::uint8_t* out) {
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const auto bytes = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(words, words)));
  store_low_bytes(bytes >> (8 * from), count, out);
}
// Eight pixels' requantised vectors (lanes are channels, values in [0, 255]) as bytes by channel:
// byte i of by_channel[c] is pixel i's value of lane c, for an NCHW row store. Two packs make, in
// each 128-bit half, 4 pixels x 4 channels of bytes; a byte shuffle turns that to 4 channels x 4
// pixels, and interleaving the two sets of 4 pixels gives each channel its 8 bytes: 14 shuffles
// for 64 bytes. cpu.23 had stored each pixel's bytes and transposed 16 x 16 blocks through memory,
// as with 16 lanes: on a Zen 3 its 1 x 1 layers of 96-576 input channels ran 1.04-1.27x faster
// without that (docs/kernel-notes.md, "cpu.23's epilogue on AVX2").
inline void bytes_by_channel(const IVec (&px)[8], std::uint64_t (&by_channel)[8]) {
  const __m256i to_channels = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                                               0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const auto four_pixels = [&](int p) {  // [c0: p..p+3, c1, c2, c3 | c4, c5, c6, c7]
    const __m256i words = _mm256_packus_epi16(_mm256_packus_epi32(px[p], px[p + 1]), _mm256_packus_epi32(px[p + 2], px[p + 3]));
    return _mm256_shuffle_epi8(words, to_channels);
  };
  const __m256i first = four_pixels(0), last = four_pixels(4);
  const __m256i low = _mm256_unpacklo_epi32(first, last), high = _mm256_unpackhi_epi32(first, last);  // c0 c1 c4 c5, c2 c3 c6 c7
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(by_channel), _mm256_permute2x128_si256(low, high, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(by_channel + 4), _mm256_permute2x128_si256(low, high, 0x31));
}
inline IVec gather_quads(const std::uint8_t* const (&src)[4], std::int64_t x, std::int64_t stride) {
  IVec word = zero();
  for (int j = 0; j < 4; ++j) {
    __m128i bytes;
    if (stride == 1) {
      bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src[j] + x));
    } else if (stride == 2) {  // the even bytes of 16 to the low half
      bytes = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[j] + 2 * x)),
                               _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    } else {
      alignas(16) std::uint8_t b[16] = {};
      for (int l = 0; l < kLanes; ++l) b[l] = src[j][(x + l) * stride];
      bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(b));
    }
    word = _mm256_or_si256(word, _mm256_slli_epi32(_mm256_cvtepu8_epi32(bytes), 8 * j));
  }
  return word;
}
inline void store(void* p, IVec v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
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
inline IVec requantize_channel(IVec acc, float m, float o, IVec zp, IVec lo, IVec hi) {
  for (int l = 0; l < kLanes; ++l) acc.v[l] = requantize_one(acc.v[l], m, o, zp.v[l], lo.v[l], hi.v[l]);
  return acc;
}
inline void store_bytes(IVec q, int from, int count, std::uint8_t* out) {
  for (int l = 0; l < count; ++l) out[l] = static_cast<std::uint8_t>(q.v[from + l]);
}
inline IVec gather_quads(const std::uint8_t* const (&src)[4], std::int64_t x, std::int64_t stride) {
  IVec word;
  for (int l = 0; l < kLanes; ++l) word.v[l] = quad_word(src, (x + l) * stride);
  return word;
}
inline void store(void* p, IVec v) { std::memcpy(p, v.v, sizeof v.v); }
#endif

// The seven-bit path. Without VNNI, dot4_add's exact sums take nine instructions (the bytes
// widened to int16 in place, two vpmaddwd); vpmaddubsw + vpmaddwd by ones + vpaddd, the sequence
// oneDNN and PyTorch's engines use there, takes three but adds u8 x s8 products in saturating
// int16 pairs: wrong by up to 2 x 255 x 128 - 32767 once a pair passes 32767. With every u8 under
// 128 no pair can (|2 x 127 x -128| = 32512), and the three give the same exact sums. The u8
// operands are the input bytes and the zero point (padding, channels past C), so a kernel checks
// them per run (seven_bit_input: one read of the input, stopping at the first byte over 127) and
// takes the path that is exact for them: a fast path, never a different result. Data quantised to
// 7 bits (PyTorch's reduce_range, `conv --precision int8`'s inputs) takes it; full-range
// activations do not. With VNNI (vpdpbusd is exact on all bytes) and in the portable form there is
// no such path: dot4_add_7bit is dot4_add, and seven_bit_input says no without reading.
#if defined(CONVLAB_INT8_SEVEN_BIT_PATH)
constexpr bool kSevenBitPath = true;
#undef CONVLAB_INT8_SEVEN_BIT_PATH
// The three instructions as one asm block, the same text for 256- and 512-bit registers: with the
// intrinsics GCC 12 issued a whole tile's vpmaddubsw before its vpmaddwd, each product in its own
// register, and spilled accumulators to the stack (cpu.24, 8 accumulators of 16 registers). The
// weights may stay in memory ("vm"), as GCC folds them.
inline IVec dot4_add_7bit(IVec acc, IVec a_u8, IVec b_s8) {
  const IVec ones = splat(0x00010001);  // int16 ones
  IVec t;
  asm("vpmaddubsw %[b], %[a], %[t]\n\tvpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[acc], %[acc]"
      : [acc] "+v"(acc), [t] "=&v"(t)
      : [a] "v"(a_u8), [b] "vm"(b_s8), [ones] "v"(ones));
  return acc;
}
#else
constexpr bool kSevenBitPath = false;
inline IVec dot4_add_7bit(IVec acc, IVec a_u8, IVec b_s8) { return dot4_add(acc, a_u8, b_s8); }
#endif
template <bool kSevenBit>
inline IVec dot4(IVec acc, IVec a_u8, IVec b_s8) {
  if constexpr (kSevenBit) {
    return dot4_add_7bit(acc, a_u8, b_s8);
  } else {
    return dot4_add(acc, a_u8, b_s8);
  }
}
// Whether a run may take dot4_add_7bit: this build has the path, the zero point and every one of
// the `count` input bytes are under 128. Large inputs are read by all threads, after a first
// chunk alone (full-range data stops there).
inline bool seven_bit_input(const std::uint8_t* input, std::int64_t count, std::uint8_t zero_point) {
  if (!kSevenBitPath || zero_point >= 128) return false;
  constexpr std::int64_t kChunk = 4096, kParallelFrom = 1 << 20;
  const auto high_bit = [&](std::int64_t chunk) {
    std::uint8_t bits = 0;
    for (std::int64_t i = chunk * kChunk, end = std::min(count, i + kChunk); i < end; ++i) bits |= input[i];  // vpor
    return bits >= 128;
  };
  const std::int64_t chunks = (count + kChunk - 1) / kChunk;
  if (chunks == 0) return true;
  if (high_bit(0)) return false;
  bool high = false;
  if (count >= kParallelFrom) {
#pragma omp parallel for schedule(static) reduction(|| : high)
    for (std::int64_t c = 1; c < chunks; ++c) high = high || high_bit(c);
  } else {
    for (std::int64_t c = 1; c < chunks && !high; ++c) high = high_bit(c);
  }
  return !high;
}

// PyTorch's quantize_per_tensor over `count` floats: quantize_u8 (kernels/common/quantize.hpp)
// on whole vectors, the same bytes: x / scale (a division, as PyTorch's), rounded half to even,
// clamped to +-1024 (NaN to -1024: vmaxps returns its second operand for a NaN), plus the zero
// point, saturated. The scalar form took as long as lab-cnn's first int8 convolution (ops::quantize
// starts every int8 network).
inline void quantize_bytes(const float* in, std::uint8_t* out, std::int64_t count, QuantParams q) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 scale = _mm512_set1_ps(q.scale), lo = _mm512_set1_ps(-1024.0f), hi = _mm512_set1_ps(1024.0f);
  const __m512i zp = _mm512_set1_epi32(q.zero_point), zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
  for (; i + 16 <= count; i += 16) {
    const __m512 r = _mm512_roundscale_ps(_mm512_div_ps(_mm512_loadu_ps(in + i), scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, lo), hi)), zp);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, zero), top)));
  }
#elif defined(__AVX2__)
  const __m256 scale = _mm256_set1_ps(q.scale), lo = _mm256_set1_ps(-1024.0f), hi = _mm256_set1_ps(1024.0f);
  const __m256i zp = _mm256_set1_epi32(q.zero_point);
  for (; i + 8 <= count; i += 8) {
    const __m256 r = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(in + i), scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi)), zp);
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));  // |v| < 2^15
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packus_epi16(words, words));   // saturates to [0, 255]
  }
#endif
  for (; i < count; ++i) out[i] = quantize_u8(in[i], q);
}

// ops::add_u8 over `count` byte pairs: AddRequant (kernels/common/quantize.hpp) on whole
// vectors, the same bytes (vcvtps2dq rounds half to even in the default MXCSR mode, as
// nearbyint). The scalar loop took 5% of resnet8's int8 forward at batch 32.
inline void add_bytes(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, std::int64_t count,
                      const AddRequant& rq) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 sa = _mm512_set1_ps(rq.a_scale), sb = _mm512_set1_ps(rq.b_scale);
  const __m512 lo = _mm512_set1_ps(-1024.0f), hi = _mm512_set1_ps(1024.0f);
  const __m512i za = _mm512_set1_epi32(rq.a_zero_point), zb = _mm512_set1_epi32(rq.b_zero_point);
  const __m512i zo = _mm512_set1_epi32(rq.out_zero_point), floor = _mm512_set1_epi32(rq.lo), top = _mm512_set1_epi32(255);
  for (; i + 16 <= count; i += 16) {
    const __m512 x = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))), za));
    const __m512 y = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i))), zb));
    const __m512 r = _mm512_min_ps(_mm512_max_ps(_mm512_fmadd_ps(sa, x, _mm512_mul_ps(sb, y)), lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(r), zo);  // lo >= 0: max(q, lo) also saturates at 0
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(q, floor), top)));
  }
#elif defined(__AVX2__)
  const __m256 sa = _mm256_set1_ps(rq.a_scale), sb = _mm256_set1_ps(rq.b_scale);
  const __m256 lo = _mm256_set1_ps(-1024.0f), hi = _mm256_set1_ps(1024.0f);
  const __m256i za = _mm256_set1_epi32(rq.a_zero_point), zb = _mm256_set1_epi32(rq.b_zero_point);
  const __m256i zo = _mm256_set1_epi32(rq.out_zero_point), floor = _mm256_set1_epi32(rq.lo), top = _mm256_set1_epi32(255);
  for (; i + 8 <= count; i += 8) {
    const __m256 x = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i))), za));
    const __m256 y = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i))), zb));
    const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(sa, x, _mm256_mul_ps(sb, y)), lo), hi);
    const __m256i q = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(r), zo), floor), top);
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packus_epi16(words, words));
  }
#endif
  for (; i < count; ++i) out[i] = rq(a[i], b[i]);
}

// Bytes a caller leaves writable past its last padded row: copy_padded_row may store a whole
// 64-byte vector for a shorter row.
inline constexpr std::int64_t kPaddedRowSlack = 64;

// A row of `row_bytes` (a multiple of 16): the zero point, with `w` input bytes copied in at
// `pad_w` (none when `from` is null: a row of padding). Rows are short (8 to 56 bytes in the lab
// networks): a memset and a memcpy call per row, or a byte loop, took a third of a 1 x 1 layer's
// time (cpu.24) and most of a depthwise one's (cpu.25). With AVX-512BW a row of up to 64 bytes
// is one store, so that each of the gathers' loads that follow lies within one store and is
// forwarded from it; else pieces of constant size, one move each.
inline void copy_padded_row(std::uint8_t* row, std::int64_t row_bytes, const std::uint8_t* from, std::int64_t w,
                            std::int64_t pad_w, std::uint8_t zero_point) {
#if defined(__AVX512BW__)
  if (row_bytes <= 64 && pad_w + w <= 64) {
    __m512i v = _mm512_set1_epi8(static_cast<char>(zero_point));
    if (from != nullptr) {
      // The input lands at [pad_w, pad_w + w) by a masked load from pad_w bytes before it: the
      // masked-off lanes are never accessed (nor can they fault), and the address is made as an
      // integer, since no pointer may point before the input.
      const __mmask64 mask = (w == 64 ? ~0ull : (1ull << w) - 1) << pad_w;
      v = _mm512_mask_loadu_epi8(v, mask, reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(from) - pad_w));
    }
    _mm512_storeu_si512(row, v);
    return;
  }
#endif
  std::uint8_t zp16[16];
  std::memset(zp16, zero_point, 16);
  for (std::int64_t x = 0; x < row_bytes; x += 16) std::memcpy(row + x, zp16, 16);
  if (from == nullptr) return;
  std::uint8_t* to = row + pad_w;
  std::int64_t x = 0;
  for (; x + 16 <= w; x += 16) std::memcpy(to + x, from + x, 16);
  if (x + 8 <= w) std::memcpy(to + x, from + x, 8), x += 8;
  if (x + 4 <= w) std::memcpy(to + x, from + x, 4), x += 4;
  for (; x < w; ++x) to[x] = from[x];
}

// kLanes words, word l = the four bytes at row + (x + l) * stride: gather_quads over one row's
// neighbouring bytes (quads over kernel columns, no dilation). AVX2 at stride 1 and 2 makes them
// with one byte shuffle of one or two 16-byte loads (the row may be read 24 bytes past x * stride);
// elsewhere gather_quads.
inline IVec gather_row_quads(const std::uint8_t* row, std::int64_t x, std::int64_t stride) {
#if defined(__AVX2__) && !defined(__AVX512BW__)
  if (stride == 1) {
    const __m256i bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + x)));
    return _mm256_shuffle_epi8(bytes, _mm256_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,  //
                                                       4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10));
  }
  if (stride == 2) {
    const __m256i bytes = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * x))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * x + 8)), 1);
    return _mm256_shuffle_epi8(bytes, _mm256_setr_epi8(0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9,  //
                                                       0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9));
  }
#endif
  const std::uint8_t* const src[4] = {row, row + 1, row + 2, row + 3};
  return gather_quads(src, x, stride);
}

// Makes the compiler hold v in a register from here (microkernel.hpp's keep_in_register, for
// the integer vector): otherwise GCC folds a loaded vector into every instruction that uses it.
inline void keep_in_register(IVec& v) {
#if defined(__AVX2__)
  asm("" : "+v"(v));
#else
  (void)v;
#endif
}

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
