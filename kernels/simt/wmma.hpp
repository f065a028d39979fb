// nvcuda::wmma for the emulator: the results of tensor-core fragments, not their speed or layout.
//
// On a GPU a fragment is spread over the 32 lanes of a warp in an unspecified layout, and the
// *_sync functions are collective. Here every lane holds the whole matrix: load_matrix_sync
// reads all of it (the data sits in memory every lane can see, behind the kernel's barrier),
// mma_sync computes the whole product, store_matrix_sync writes all of it (each lane the same
// values). Code that only uses the API gets the GPU's result: TF32 inputs (__float_to_tf32
// rounds to 10 mantissa bits, to nearest, ties away from zero, as cvt.rna.tf32.f32 does) and FP32
// accumulation. A fragment's x[num_elements] are here the whole matrix, not the lane's share, so
// only element-wise code that treats every element alike (the GPU's `x[t] = __float_to_tf32(x[t])`
// over a fragment) gives the GPU's result. Only the tf32 m16n16k8 shape is provided.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

inline float __float_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits = (bits + 0x1000u) & 0xffffe000u;  // add half of the 13 dropped bits' unit: round half away
  return std::bit_cast<float>(bits);
}

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment;

// The whole rows x cols matrix, row-major in x.
template <int kRows, int kCols>
struct whole_matrix {
  static constexpr int rows = kRows, cols = kCols, num_elements = kRows * kCols;
  float x[num_elements];
  float& at(int i, int j) { return x[i * cols + j]; }
  float at(int i, int j) const { return x[i * cols + j]; }
};
template <class Layout>
struct fragment<matrix_a, 16, 16, 8, precision::tf32, Layout> : whole_matrix<16, 8> {};
template <class Layout>
struct fragment<matrix_b, 16, 16, 8, precision::tf32, Layout> : whole_matrix<8, 16> {};
template <>
struct fragment<accumulator, 16, 16, 8, float, void> : whole_matrix<16, 16> {};

template <class Use, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 8, precision::tf32, Layout>& f, const float* p, unsigned ldm) {
  using F = fragment<Use, 16, 16, 8, precision::tf32, Layout>;
  constexpr bool row = std::is_same_v<Layout, row_major>;
  for (int i = 0; i < F::rows; ++i)
    for (int j = 0; j < F::cols; ++j) f.at(i, j) = row ? p[i * ldm + j] : p[j * ldm + i];
}

inline void fill_fragment(fragment<accumulator, 16, 16, 8, float>& f, float v) {
  for (float& x : f.x) x = v;
}

template <class LayoutA, class LayoutB>
void mma_sync(fragment<accumulator, 16, 16, 8, float>& d, const fragment<matrix_a, 16, 16, 8, precision::tf32, LayoutA>& a,
              const fragment<matrix_b, 16, 16, 8, precision::tf32, LayoutB>& b,
              const fragment<accumulator, 16, 16, 8, float>& c) {
  fragment<accumulator, 16, 16, 8, float> r;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float sum = c.at(i, j);
      for (int k = 0; k < 8; ++k) sum += __float_to_tf32(a.at(i, k)) * __float_to_tf32(b.at(k, j));
      r.at(i, j) = sum;
    }
  d = r;
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 8, float>& f, unsigned ldm, layout_t layout) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) (layout == mem_row_major ? p[i * ldm + j] : p[j * ldm + i]) = f.at(i, j);
}

}  // namespace nvcuda::wmma
