// CUDA's arithmetic intrinsics, atomics and min/max for the emulator (included by simt.hpp only).
// The fast-math intrinsics (__expf, __fdividef, ...) compute the exact result here: the emulator
// checks logic, not the last ulp of the GPU's approximations.
#pragma once

#include <math.h>  // fmaf, expf, ... in the global namespace, where CUDA has them

#include <bit>
#include <cstdint>

template <class T>
inline T __ldg(const T* p) {
  return *p;
}

inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }  // never contracted: its own rounding
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }  // NaN → 0 as on the GPU

inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }  // half to even, as the GPU's
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }

inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }

// __dp4a: c plus the dot product of the four bytes of a and b, signed or unsigned bytes as the
// overload says; the 32-bit sum wraps, as the GPU's does.
inline int __dp4a(int a, int b, int c) {
  auto sum = static_cast<std::uint32_t>(c);
  for (int i = 0; i < 4; ++i)
    sum += static_cast<std::uint32_t>(static_cast<std::int8_t>(a >> 8 * i) * static_cast<std::int8_t>(b >> 8 * i));
  return static_cast<int>(sum);
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += (a >> 8 * i & 0xFFu) * (b >> 8 * i & 0xFFu);
  return c;
}

// min and max as CUDA overloads them; mixed signed/unsigned int compares as unsigned, as in CUDA.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// Atomics: one OS thread runs every fiber and no fiber is switched out mid-operation, so a plain
// read-modify-write is atomic. Each returns the old value, as CUDA's do.
namespace convlab::simt::detail {
template <class T, class F>
T read_modify_write(T* address, F update) {
  const T old = *address;
  *address = update(old);
  return old;
}
}  // namespace convlab::simt::detail

#define CONVLAB_SIMT_ATOMIC(name, type, expr)                                                    \
  inline type name(type* address, type val) {                                                   \
    return convlab::simt::detail::read_modify_write(address, [val]([[maybe_unused]] type old) -> type { return expr; }); \
  }
CONVLAB_SIMT_ATOMIC(atomicAdd, float, old + val)
CONVLAB_SIMT_ATOMIC(atomicAdd, double, old + val)
CONVLAB_SIMT_ATOMIC(atomicAdd, int, old + val)
CONVLAB_SIMT_ATOMIC(atomicAdd, unsigned, old + val)
CONVLAB_SIMT_ATOMIC(atomicAdd, unsigned long long, old + val)
CONVLAB_SIMT_ATOMIC(atomicSub, int, old - val)
CONVLAB_SIMT_ATOMIC(atomicSub, unsigned, old - val)
CONVLAB_SIMT_ATOMIC(atomicMax, int, old > val ? old : val)
CONVLAB_SIMT_ATOMIC(atomicMax, unsigned, old > val ? old : val)
CONVLAB_SIMT_ATOMIC(atomicMin, int, old < val ? old : val)
CONVLAB_SIMT_ATOMIC(atomicMin, unsigned, old < val ? old : val)
CONVLAB_SIMT_ATOMIC(atomicExch, int, val)
CONVLAB_SIMT_ATOMIC(atomicExch, unsigned, val)
CONVLAB_SIMT_ATOMIC(atomicExch, unsigned long long, val)
CONVLAB_SIMT_ATOMIC(atomicExch, float, val)
CONVLAB_SIMT_ATOMIC(atomicAnd, int, old & val)
CONVLAB_SIMT_ATOMIC(atomicAnd, unsigned, old & val)
CONVLAB_SIMT_ATOMIC(atomicOr, int, old | val)
CONVLAB_SIMT_ATOMIC(atomicOr, unsigned, old | val)
#undef CONVLAB_SIMT_ATOMIC

#define CONVLAB_SIMT_ATOMIC_CAS(type)                                                        \
  inline type atomicCAS(type* address, type compare, type val) {                            \
    return convlab::simt::detail::read_modify_write(                                        \
        address, [compare, val](type old) -> type { return old == compare ? val : old; }); \
  }
CONVLAB_SIMT_ATOMIC_CAS(int)
CONVLAB_SIMT_ATOMIC_CAS(unsigned)
CONVLAB_SIMT_ATOMIC_CAS(unsigned long long)
#undef CONVLAB_SIMT_ATOMIC_CAS
