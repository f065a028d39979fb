#include "kernels/cpu/ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <xsimd/xsimd.hpp>

#include "kernels/common/error.hpp"
#include "kernels/cpu/int8_simd.hpp"
#include "kernels/cpu/tile_loop.hpp"

namespace convlab::ops {

Shape pool_output_shape(const Shape& in, const Pool2d& pool) {
  if (pool.kernel < 1 || pool.stride < 1 || pool.pad < 0 || 2 * pool.pad > pool.kernel)
    throw InputError(fmt::format("bad pooling: kernel {} stride {} pad {} (need kernel>=1, stride>=1, 0<=pad<=kernel/2)",
                                 pool.kernel, pool.stride, pool.pad));
  const std::int64_t oh = (in.h() + 2 * pool.pad - pool.kernel) / pool.stride + 1;
  const std::int64_t ow = (in.w() + 2 * pool.pad - pool.kernel) / pool.stride + 1;
  if (in.h() + 2 * pool.pad < pool.kernel || in.w() + 2 * pool.pad < pool.kernel)
    throw InputError(fmt::format("pooling kernel {} is larger than the {}x{} input", pool.kernel, in.h(), in.w()));
  return nchw(in.n(), in.c(), oh, ow);
}

void relu(float* x, std::int64_t count) {
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) x[i] = std::max(x[i], 0.0f);
}

namespace {
// The common window, 2 x 2 at stride 2 with no padding: every one inside the plane, so the pools
// take paths with no bounds to check.
bool plain_2x2(const Pool2d& pool) { return pool.kernel == 2 && pool.stride == 2 && pool.pad == 0; }

// Shared window walk of max and average pooling, FP32 and quint8; `step` sees the in-bounds
// values of a window.
template <typename T, typename Init, typename Step, typename Finish>
void pool2d(const T* in, const Shape& s, T* out, const Pool2d& pool, Init init, Step step, Finish finish) {
  const Shape o = pool_output_shape(s, pool);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < s.n(); ++n) {
    for (std::int64_t c = 0; c < s.c(); ++c) {
      const T* plane = in + (n * s.c() + c) * s.h() * s.w();
      T* dst = out + (n * s.c() + c) * o.h() * o.w();
      if (plain_2x2(pool)) {
        // No bounds to check, and a loop the compiler vectorises (quint8 max pooling took as long
        // as the conv before it without this; it now has max_pool_2x2_u8_row).
        for (std::int64_t y = 0; y < o.h(); ++y) {
          const T* top = plane + 2 * y * s.w();
          const T* bottom = top + s.w();
          T* row = dst + y * o.w();
          for (std::int64_t x = 0; x < o.w(); ++x)
            row[x] = finish(step(step(step(step(init(), top[2 * x]), top[2 * x + 1]), bottom[2 * x]), bottom[2 * x + 1]));
        }
        continue;
      }
      for (std::int64_t y = 0; y < o.h(); ++y) {
        for (std::int64_t x = 0; x < o.w(); ++x) {
          auto acc = init();
          for (std::int64_t i = 0; i < pool.kernel; ++i) {
            const std::int64_t iy = y * pool.stride - pool.pad + i;
            if (iy < 0 || iy >= s.h()) continue;
            for (std::int64_t j = 0; j < pool.kernel; ++j) {
              const std::int64_t ix = x * pool.stride - pool.pad + j;
              if (ix >= 0 && ix < s.w()) acc = step(acc, plane[iy * s.w() + ix]);
            }
          }
          dst[y * o.w() + x] = finish(acc);
        }
      }
    }
  }
}
}  // namespace

void max_pool2d(const float* in, const Shape& s, float* out, const Pool2d& pool) {
  pool2d(in, s, out, pool, [] { return -std::numeric_limits<float>::infinity(); },
         [](float a, float v) { return std::max(a, v); }, [](float a) { return a; });
}

void avg_pool2d(const float* in, const Shape& s, float* out, const Pool2d& pool) {
  const float inv_area = 1.0f / static_cast<float>(pool.kernel * pool.kernel);
  pool2d(in, s, out, pool, [] { return 0.0f; }, [](float a, float v) { return a + v; },
         [inv_area](float a) { return a * inv_area; });
}

void global_avg_pool(const float* in, const Shape& s, float* out) {
  const std::int64_t plane = s.h() * s.w();
#pragma omp parallel for schedule(static)
  for (std::int64_t nc = 0; nc < s.n() * s.c(); ++nc) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < plane; ++i) sum += in[nc * plane + i];
    out[nc] = static_cast<float>(sum / static_cast<double>(plane));
  }
}

namespace {

using Vec = xsimd::batch<float>;
constexpr std::int64_t kLinearImages = 2, kLinearOutputs = 4;

// Outputs [o0, o0 + kO) of images [n0, n0 + kN): dot products of input rows with weight rows
// (PyTorch's out x in layout, as given), kN x kO accumulator vectors, so each loaded input vector
// serves kO weight rows and each weight vector kN images, and the FMAs form kN x kO independent
// chains. The lanes are summed at the end, then the columns past the last whole vector, then the
// bias: a fixed order, whatever the thread count. Before, one scalar add chain per output ran
// lenet5's fc1 at 4.8 GFLOP/s, 63% of that network's forward pass at batch 32 (bench/RESULTS.md).
template <int kN, int kO>
void linear_tile(const float* in, std::int64_t in_features, const float* weight, const float* bias,
                 std::int64_t out_features, float* out, bool relu_after) {
  Vec acc[kN][kO];  // every loop over it unrolled (tile_loop.hpp): in registers with clang too
  CONVLAB_TILE_LOOP
  for (auto& row : acc) {
    CONVLAB_TILE_LOOP
    for (Vec& a : row) a = Vec(0.0f);
  }
  const std::int64_t whole = in_features / Vec::size * Vec::size;
  for (std::int64_t i = 0; i < whole; i += Vec::size) {
    Vec x[kN];
    CONVLAB_TILE_LOOP
    for (int n = 0; n < kN; ++n) x[n] = Vec::load_unaligned(in + n * in_features + i);
    CONVLAB_TILE_LOOP
    for (int o = 0; o < kO; ++o) {
      const Vec w = Vec::load_unaligned(weight + o * in_features + i);
      CONVLAB_TILE_LOOP
      for (int n = 0; n < kN; ++n) acc[n][o] = xsimd::fma(x[n], w, acc[n][o]);
    }
  }
  CONVLAB_TILE_LOOP
  for (int n = 0; n < kN; ++n)
    CONVLAB_TILE_LOOP
    for (int o = 0; o < kO; ++o) {
      float sum = xsimd::hadd(acc[n][o]);
      for (std::int64_t i = whole; i < in_features; ++i)
        sum = std::fma(in[n * in_features + i], weight[o * in_features + i], sum);
      if (bias != nullptr) sum += bias[o];
      out[n * out_features + o] = relu_after ? std::max(sum, 0.0f) : sum;
    }
}

using LinearTile = void (*)(const float*, std::int64_t, const float*, const float*, std::int64_t, float*, bool);
// kLinearTiles[images - 1][outputs - 1]: the full tile and the batch's and the outputs' tails.
constexpr auto kLinearTiles = []<std::size_t... kN>(std::index_sequence<kN...>) {
  const auto row = []<int kImages, std::size_t... kO>(std::index_sequence<kO...>) {
    return std::array<LinearTile, kLinearOutputs>{&linear_tile<kImages, static_cast<int>(kO) + 1>...};
  };
  return std::array{row.template operator()<static_cast<int>(kN) + 1>(std::make_index_sequence<kLinearOutputs>())...};
}(std::make_index_sequence<kLinearImages>());

}  // namespace

void linear(const float* in, std::int64_t batch, std::int64_t in_features, const float* weight,
            const float* bias, std::int64_t out_features, float* out, bool relu_after) {
  const std::int64_t image_blocks = (batch + kLinearImages - 1) / kLinearImages;
  const std::int64_t output_blocks = (out_features + kLinearOutputs - 1) / kLinearOutputs;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t nb = 0; nb < image_blocks; ++nb) {
    for (std::int64_t ob = 0; ob < output_blocks; ++ob) {
      const std::int64_t n0 = nb * kLinearImages, o0 = ob * kLinearOutputs;
      const std::int64_t images = std::min(kLinearImages, batch - n0), outputs = std::min(kLinearOutputs, out_features - o0);
      kLinearTiles[images - 1][outputs - 1](in + n0 * in_features, in_features, weight + o0 * in_features,
                                            bias == nullptr ? nullptr : bias + o0, out_features,
                                            out + n0 * out_features + o0, relu_after);
    }
  }
}

void softmax(const float* in, std::int64_t batch, std::int64_t classes, float* out) {
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < batch; ++n) {
    const float* x = in + n * classes;
    float* y = out + n * classes;
    const float top = *std::max_element(x, x + classes);
    float sum = 0.0f;
    for (std::int64_t i = 0; i < classes; ++i) sum += (y[i] = std::exp(x[i] - top));
    for (std::int64_t i = 0; i < classes; ++i) y[i] /= sum;
  }
}

void add(const float* a, const float* b, float* out, std::int64_t count, bool relu_after) {
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = a[i] + b[i];
    out[i] = relu_after ? std::max(v, 0.0f) : v;
  }
}

// Quantised operators. A max commutes with the affine map and an average nearly does, so the pools
// keep their input's scale and zero point (as PyTorch's quantised pools do) and work on the bytes.

namespace {

// One output row of a 2 x 2, stride-2 max pool of bytes: the two input rows' maximum (vpmaxub),
// then each pair of neighbours' as the two bytes of a 16-bit word, narrowed back to bytes; 32,
// 16, then 8 outputs at a time. The generic loop widened every byte to an int: the u8 pool took
// twice the FP32 one's time (lab-cnn's pool1 at batch 32, 2-core Ice Lake VM).
void max_pool_2x2_u8_row(const std::uint8_t* top, const std::uint8_t* bottom, std::uint8_t* out, std::int64_t ow) {
  std::int64_t x = 0;
#if defined(__AVX512BW__)
  const __m512i low = _mm512_set1_epi16(0x00ff);
  for (; x + 32 <= ow; x += 32) {
    const __m512i m = _mm512_max_epu8(_mm512_loadu_si512(top + 2 * x), _mm512_loadu_si512(bottom + 2 * x));
    const __m512i pairs = _mm512_max_epu16(_mm512_and_si512(m, low), _mm512_srli_epi16(m, 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), _mm512_cvtepi16_epi8(pairs));
  }
#endif
#if defined(__AVX2__)
  const __m256i low16 = _mm256_set1_epi16(0x00ff);
  for (; x + 16 <= ow; x += 16) {
    const __m256i m = _mm256_max_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(top + 2 * x)),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bottom + 2 * x)));
    const __m256i pairs = _mm256_max_epu16(_mm256_and_si256(m, low16), _mm256_srli_epi16(m, 8));
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), bytes);
  }
#endif
#if defined(__SSE2__)
  // 8 outputs (lab-cnn's pools give rows of 16 and 8).
  for (; x + 8 <= ow; x += 8) {
    const __m128i m = _mm_max_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(top + 2 * x)),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(bottom + 2 * x)));
    const __m128i pairs = _mm_max_epi16(_mm_and_si128(m, _mm_set1_epi16(0x00ff)), _mm_srli_epi16(m, 8));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + x), _mm_packus_epi16(pairs, pairs));
  }
#endif
  for (; x < ow; ++x) out[x] = std::max({top[2 * x], top[2 * x + 1], bottom[2 * x], bottom[2 * x + 1]});
}

#if defined(__AVX512VBMI__)
// A 2 x 2, stride-2 max pool of planes whose rows divide 32 bytes and whose height is even: the
// tensor is then one run of row pairs, and every 64 input bytes (whole pairs) give 16 outputs in
// order. One vpermb puts each output's four bytes in four quarters (top even and odd columns,
// bottom even and odd), two maxima fold them. The row loop above took 11-12 us a pool at batch 32
// (lab-cnn's 32 x 32 and 16 x 16 planes, 8192 calls of 8-16 outputs); this, 7 and 5 us.
bool max_pool_2x2_u8_flat(const std::uint8_t* in, const Shape& s, std::uint8_t* out) {
  const std::int64_t w = s.w();
  if (w < 2 || 32 % w != 0 || s.h() % 2 != 0) return false;
  alignas(64) std::uint8_t index[64];
  for (int i = 0; i < 64; ++i) {
    const int quarter = i / 16, j = i % 16, pair = j / static_cast<int>(w / 2), column = j % static_cast<int>(w / 2);
    index[i] = static_cast<std::uint8_t>(2 * w * pair + (quarter >= 2 ? w : 0) + 2 * column + quarter % 2);
  }
  const __m512i permute = _mm512_load_si512(index);
  const auto pool = [&](__m512i x) {
    const __m512i quarters = _mm512_permutexvar_epi8(permute, x);
    const __m256i rows = _mm256_max_epu8(_mm512_castsi512_si256(quarters), _mm512_extracti64x4_epi64(quarters, 1));
    return _mm_max_epu8(_mm256_castsi256_si128(rows), _mm256_extracti128_si256(rows, 1));
  };
  const std::int64_t bytes = s.elems(), blocks = bytes / 64, tail = bytes % 64;  // the tail: whole pairs, 4k bytes
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * b), pool(_mm512_loadu_si512(in + 64 * b)));
  if (tail > 0)
    _mm_mask_storeu_epi8(out + 16 * blocks, static_cast<__mmask16>((1u << (tail / 4)) - 1),
                         pool(_mm512_maskz_loadu_epi8(_cvtu64_mask64((1ull << tail) - 1), in + 64 * blocks)));
  return true;
}
#endif

}  // namespace

void max_pool2d_u8(const std::uint8_t* in, const Shape& s, std::uint8_t* out, const Pool2d& pool) {
#if defined(__AVX512VBMI__)
  if (plain_2x2(pool) && max_pool_2x2_u8_flat(in, s, out)) return;
#endif
  if (plain_2x2(pool)) {
    const Shape o = pool_output_shape(s, pool);
#pragma omp parallel for schedule(static)
    for (std::int64_t plane = 0; plane < s.n() * s.c(); ++plane)
      for (std::int64_t y = 0; y < o.h(); ++y) {
        const std::uint8_t* top = in + plane * s.h() * s.w() + 2 * y * s.w();
        max_pool_2x2_u8_row(top, top + s.w(), out + (plane * o.h() + y) * o.w(), o.w());
      }
    return;
  }
  pool2d(in, s, out, pool, [] { return 0; }, [](int a, std::uint8_t v) { return std::max(a, int{v}); },
         [](int a) { return static_cast<std::uint8_t>(a); });
}

void avg_pool2d_u8(const std::uint8_t* in, const Shape& s, std::uint8_t* out, const Pool2d& pool, std::int32_t zero_point) {
  // Sums (q - zero point): padding, the real 0, adds nothing and still counts in the divisor.
  const float area = static_cast<float>(pool.kernel * pool.kernel);
  pool2d(in, s, out, pool, [] { return 0; }, [zero_point](int a, std::uint8_t v) { return a + v - zero_point; },
         [area, zero_point](int a) { return saturate_u8(static_cast<std::int32_t>(std::nearbyint(a / area)) + zero_point); });
}

namespace {
// The sum of `count` bytes. With AVX-512BW, vpsadbw against zero sums each 8 bytes into a 64-bit
// lane, 64 bytes an instruction; the byte loop it replaces ran at 11-17 GB/s (lab-cnn's gap 8 us
// and resnet18's 70 us at batch 32), this 1.7-3x faster.
std::int64_t sum_bytes(const std::uint8_t* p, std::int64_t count) {
  std::int64_t i = 0, sum = 0;
#if defined(__AVX512BW__)
  __m512i sums = _mm512_setzero_si512();
  for (; i + 64 <= count; i += 64) sums = _mm512_add_epi64(sums, _mm512_sad_epu8(_mm512_loadu_si512(p + i), _mm512_setzero_si512()));
  if (i < count) {
    const __m512i rest = _mm512_maskz_loadu_epi8(_cvtu64_mask64((1ull << (count - i)) - 1), p + i);
    sums = _mm512_add_epi64(sums, _mm512_sad_epu8(rest, _mm512_setzero_si512()));
    i = count;
  }
  sum = _mm512_reduce_add_epi64(sums);
#endif
  for (; i < count; ++i) sum += p[i];
  return sum;
}
}  // namespace

void global_avg_pool_u8(const std::uint8_t* in, const Shape& s, std::uint8_t* out) {
  const std::int64_t plane = s.h() * s.w();
#pragma omp parallel for schedule(static)
  for (std::int64_t nc = 0; nc < s.n() * s.c(); ++nc) {
    const std::int64_t sum = sum_bytes(in + nc * plane, plane);
    out[nc] = saturate_u8(static_cast<std::int32_t>(std::nearbyint(static_cast<double>(sum) / static_cast<double>(plane))));
  }
}

void add_u8(const std::uint8_t* a, QuantParams qa, const std::uint8_t* b, QuantParams qb, std::uint8_t* out,
         QuantParams qout, std::int64_t count, bool relu_after) {
  const AddRequant rq(qa, qb, qout, relu_after);
  constexpr std::int64_t kChunk = 4096;  // per task: whole vectors, and few enough tasks to be cheap
#pragma omp parallel for schedule(static)
  for (std::int64_t at = 0; at < count; at += kChunk)
    cpu::int8::add_bytes(a + at, b + at, out + at, std::min(kChunk, count - at), rq);
}

void quantize(const float* in, std::uint8_t* out, std::int64_t count, QuantParams q) {
  constexpr std::int64_t kChunk = 4096;  // per task: whole vectors, and few enough tasks to be cheap
#pragma omp parallel for schedule(static)
  for (std::int64_t at = 0; at < count; at += kChunk) cpu::int8::quantize_bytes(in + at, out + at, std::min(kChunk, count - at), q);
}

void dequantize(const std::uint8_t* in, float* out, std::int64_t count, QuantParams q) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) out[i] = convlab::dequantize(in[i], q);
}

}  // namespace convlab::ops
