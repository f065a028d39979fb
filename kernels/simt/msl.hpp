// The Metal Shading Language, enough of it for convlab's .metal kernels to compile as C++ (clang
// only: its ext_vector_type gives MSL's float4, uint3 and their swizzles) and run on the CPU
// emulator. A .metal file is first rewritten by kernels/simt/msl_to_cpp.cmake, which
//   - replaces `#include <metal_stdlib>` with this header,
//   - turns each built-in parameter (`uint3 gid [[thread_position_in_grid]]`) into a default
//     argument (`= ::convlab::msl::thread_position_in_grid()`), evaluated per thread at the call,
//   - appends, for each `kernel void NAME(...)`, an entry point convlab_msl_NAME(void* const*)
//     that calls NAME with the bound buffers, by position (so buffer parameters come first, in
//     [[buffer(n)]] order, and built-ins last).
// Other attributes ([[buffer(n)]]) are ignored (-Wno-unknown-attributes). kernels/simt/README.md
// says what is and is not emulated.
#pragma once

#if !defined(__clang__)
#error "MSL sources compile as C++ with clang only (ext_vector_type); see kernels/simt/README.md"
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/simt/sync.hpp"

using uint = unsigned;
using ushort = unsigned short;
using uchar = unsigned char;
using ulong = unsigned long;

// half: clang 14 has no _Float16 on x86, so a half is a float rounded to binary16 (11
// significant bits, to nearest even; overflow to infinity) whenever one is stored. Arithmetic
// happens in float, which is at least as precise as the GPU's.
struct half {
  float v = 0;
  half() = default;
  half(float x) : v(round(x)) {}  // NOLINT: implicit, as MSL converts
  operator float() const { return v; }
  static float round(float x) {
    if (!std::isfinite(x) || x == 0) return x;
    const float a = std::fabs(x);
    if (a >= 65520.0f) return std::copysign(INFINITY, x);
    int e = 0;
    std::frexp(a, &e);
    const float quantum = std::ldexp(1.0f, e - 11 < -24 ? -24 : e - 11);  // subnormals: 2^-24
    return std::copysign(std::nearbyint(a / quantum) * quantum, x);
  }
};

#define CONVLAB_MSL_VECTORS(T)                           \
  typedef T T##2 __attribute__((ext_vector_type(2)));    \
  typedef T T##3 __attribute__((ext_vector_type(3)));    \
  typedef T T##4 __attribute__((ext_vector_type(4)));
CONVLAB_MSL_VECTORS(float)
CONVLAB_MSL_VECTORS(int)
CONVLAB_MSL_VECTORS(uint)
CONVLAB_MSL_VECTORS(short)
CONVLAB_MSL_VECTORS(ushort)
CONVLAB_MSL_VECTORS(ulong)
#undef CONVLAB_MSL_VECTORS

namespace convlab::msl {

namespace detail = ::convlab::simt::detail;
inline constexpr int kSimdWidth = 32;  // Apple GPUs' SIMD-group, as the emulator's warp

// A built-in value, converted to whichever type the kernel declared (uint for 1-D grids, uint2,
// uint3, ushort...).
struct Position {
  unsigned x, y, z;
  operator uint() const { return x; }  // NOLINT: implicit, as the parameter's type decides
  operator ushort() const { return static_cast<ushort>(x); }
  operator uint2() const { return uint2{x, y}; }
  operator uint3() const { return uint3{x, y, z}; }
  operator ushort2() const { return ushort2{static_cast<ushort>(x), static_cast<ushort>(y)}; }
  operator ushort3() const { return ushort3{static_cast<ushort>(x), static_cast<ushort>(y), static_cast<ushort>(z)}; }
};

inline Position thread_position_in_threadgroup() {
  const detail::Coordinates c = detail::coordinates();
  return {c.thread[0], c.thread[1], c.thread[2]};
}
inline Position threadgroup_position_in_grid() {
  const detail::Coordinates c = detail::coordinates();
  return {c.block[0], c.block[1], c.block[2]};
}
inline Position threads_per_threadgroup() {
  const detail::Coordinates c = detail::coordinates();
  return {c.block_dim[0], c.block_dim[1], c.block_dim[2]};
}
inline Position threadgroups_per_grid() {
  const detail::Coordinates c = detail::coordinates();
  return {c.grid_dim[0], c.grid_dim[1], c.grid_dim[2]};
}
inline Position thread_position_in_grid() {
  const detail::Coordinates c = detail::coordinates();
  return {c.block[0] * c.block_dim[0] + c.thread[0], c.block[1] * c.block_dim[1] + c.thread[1],
          c.block[2] * c.block_dim[2] + c.thread[2]};
}
inline Position threads_per_grid() {
  const detail::Coordinates c = detail::coordinates();
  return {c.grid_dim[0] * c.block_dim[0], c.grid_dim[1] * c.block_dim[1], c.grid_dim[2] * c.block_dim[2]};
}
inline unsigned thread_index_in_threadgroup_value() {
  const detail::Coordinates c = detail::coordinates();
  return c.thread[0] + c.block_dim[0] * (c.thread[1] + c.block_dim[1] * c.thread[2]);
}
inline Position thread_index_in_threadgroup() { return {thread_index_in_threadgroup_value(), 0, 0}; }
inline Position thread_index_in_simdgroup() { return {thread_index_in_threadgroup_value() % kSimdWidth, 0, 0}; }
inline Position simdgroup_index_in_threadgroup() { return {thread_index_in_threadgroup_value() / kSimdWidth, 0, 0}; }
inline Position threads_per_simdgroup() { return {kSimdWidth, 0, 0}; }

// One bound buffer or set of bytes, converted to the parameter it is passed to: a pointer for
// `device float* x`, a copy of the struct for `constant Params& p`.
struct Argument {
  void* p;
  template <class T>
  operator T() const {  // NOLINT: implicit, as binding by position needs
    if constexpr (std::is_pointer_v<T>)
      return static_cast<T>(p);
    else
      return *static_cast<const T*>(p);
  }
};

template <std::size_t>
using ArgumentAt = Argument;

// Calls `kernel` (a generic lambda around a kernel's name) with the fewest leading buffers it
// accepts: the built-ins after them take their defaults.
template <std::size_t N = 0, class Kernel>
void call_by_position(const Kernel& kernel, void* const* buffers) {
  static_assert(N <= 31, "convlab::msl: the kernel takes no arity of 31 buffers or fewer");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    if constexpr (std::is_invocable_v<const Kernel&, ArgumentAt<I>...>)
      kernel(Argument{buffers[I]}...);
    else
      call_by_position<N + 1>(kernel, buffers);
  }(std::make_index_sequence<N>{});
}

}  // namespace convlab::msl

namespace metal {

namespace detail = ::convlab::simt::detail;
using ::convlab::msl::kSimdWidth;

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return static_cast<mem_flags>(static_cast<int>(a) | static_cast<int>(b));
}

// Every live thread of the threadgroup meets here; divergent barriers and deadlocks are errors
// naming the call sites, as for CUDA's __syncthreads.
inline void threadgroup_barrier(mem_flags, detail::Site site = CONVLAB_SIMT_HERE) { detail::block_barrier(1, site); }
inline void simdgroup_barrier(mem_flags, detail::Site site = CONVLAB_SIMT_HERE) {
  detail::warp_op(detail::WarpOp::sync, ~0u, 0, 0, kSimdWidth, site);
}

// SIMD-group functions. They assume every lane of the SIMD-group is active, as convlab's kernels
// arrange: a lane that returned early contributes poison (NaN), so the tests show it.
template <detail::WarpValue T>
T simd_shuffle(T v, ushort lane, detail::Site site = CONVLAB_SIMT_HERE) {
  return detail::shuffle(detail::WarpOp::shfl_idx, ~0u, v, lane, kSimdWidth, site);
}
template <detail::WarpValue T>
T simd_broadcast(T v, ushort lane, detail::Site site = CONVLAB_SIMT_HERE) {
  return simd_shuffle(v, lane, site);
}
template <detail::WarpValue T>
T simd_shuffle_down(T v, ushort delta, detail::Site site = CONVLAB_SIMT_HERE) {
  return detail::shuffle(detail::WarpOp::shfl_down, ~0u, v, delta, kSimdWidth, site);
}
template <detail::WarpValue T>
T simd_shuffle_up(T v, ushort delta, detail::Site site = CONVLAB_SIMT_HERE) {
  return detail::shuffle(detail::WarpOp::shfl_up, ~0u, v, delta, kSimdWidth, site);
}
template <detail::WarpValue T>
T simd_shuffle_xor(T v, ushort mask, detail::Site site = CONVLAB_SIMT_HERE) {
  return detail::shuffle(detail::WarpOp::shfl_xor, ~0u, v, mask, kSimdWidth, site);
}
// A butterfly: the GPU's summation order is unspecified; this one is fixed, so the emulator is
// deterministic.
template <detail::WarpValue T>
T simd_sum(T v, detail::Site site = CONVLAB_SIMT_HERE) {
  for (ushort m = kSimdWidth / 2; m > 0; m /= 2) v += simd_shuffle_xor(v, m, site);
  return v;
}
template <detail::WarpValue T>
T simd_max(T v, detail::Site site = CONVLAB_SIMT_HERE) {
  for (ushort m = kSimdWidth / 2; m > 0; m /= 2) {
    const T o = simd_shuffle_xor(v, m, site);
    v = o > v ? o : v;
  }
  return v;
}

// metal:: math. max and min are fmax and fmin (a NaN operand gives the other), as in MSL: kernels
// that must let NaN through compare explicitly.
using std::abs;
using std::ceil;
using std::exp;
using std::floor;
using std::fma;
using std::isfinite;
using std::isnan;
using std::log;
using std::sqrt;
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline float min(float a, float b) { return std::fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline uint max(uint a, uint b) { return a > b ? a : b; }
inline uint min(uint a, uint b) { return a < b ? a : b; }
inline float clamp(float x, float lo, float hi) { return std::fmin(std::fmax(x, lo), hi); }

// simdgroup matrices (MSL 2.3): 8x8 tiles that a SIMD-group loads, multiplies and stores
// together. As the WMMA model (wmma.hpp) does: every lane holds the whole tile and computes the
// whole product (FP32, fused multiply-add in k order), after a rendezvous of the SIMD-group, so
// the GPU's result is reproduced without its register layout. Only float 8x8 is provided.
template <class T, int Rows, int Cols>
struct simdgroup_matrix {
  T m[Rows][Cols];
};
using simdgroup_float8x8 = simdgroup_matrix<float, 8, 8>;

template <class T, int R, int C>
simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, R, C> out;
  for (auto& row : out.m)
    for (T& x : row) x = value;
  return out;
}

// elements_per_row: the stride between rows in memory; origin: (column, row) of the tile's first
// element; transpose: read the tile's columns from memory rows.
inline void simdgroup_load(simdgroup_float8x8& d, const float* src, ulong elements_per_row = 8,
                           ulong2 origin = ulong2{0, 0}, bool transpose = false,
                           detail::Site site = CONVLAB_SIMT_HERE) {
  simdgroup_barrier(mem_flags::mem_none, site);  // the SIMD-group meets first
  const float* base = src + origin.y * elements_per_row + origin.x;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) d.m[i][j] = transpose ? base[j * elements_per_row + i] : base[i * elements_per_row + j];
}
inline void simdgroup_store(const simdgroup_float8x8& a, float* dst, ulong elements_per_row = 8,
                            ulong2 origin = ulong2{0, 0}, bool transpose = false,
                            detail::Site site = CONVLAB_SIMT_HERE) {
  simdgroup_barrier(mem_flags::mem_none, site);  // the SIMD-group meets first
  float* base = dst + origin.y * elements_per_row + origin.x;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) (transpose ? base[j * elements_per_row + i] : base[i * elements_per_row + j]) = a.m[i][j];
}
// d = a * b + c
inline void simdgroup_multiply_accumulate(simdgroup_float8x8& d, const simdgroup_float8x8& a,
                                          const simdgroup_float8x8& b, const simdgroup_float8x8& c,
                                          detail::Site site = CONVLAB_SIMT_HERE) {
  simdgroup_barrier(mem_flags::mem_none, site);  // the SIMD-group meets first
  simdgroup_float8x8 out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      float acc = c.m[i][j];
      for (int k = 0; k < 8; ++k) acc = std::fma(a.m[i][k], b.m[k][j], acc);
      out.m[i][j] = acc;
    }
  d = out;
}

}  // namespace metal

// MSL's address spaces and function qualifiers, last, so that nothing above is rewritten.
// constant memory is read-only: `constant Params& p` becomes a const reference, which binds the
// copy the emulator passes. A threadgroup array declared in a kernel body becomes a static: the threads of a threadgroup are
// fibers on one OS thread, so they share it, and the emulator poisons it before each threadgroup
// (kernels/simt/shared.ld). Kernels here never take threadgroup pointers as parameters.
#define kernel
#define device
#define constant const
#define thread
#define threadgroup static
