// What the int8 implicit-GEMM kernels share (cuda.20_int8_dp4a, cuda.21_int8_mma): the weights'
// layout, the im2col gather of four taps into one 32-bit word, and the requantising epilogue.
//
// The product. An activation x is a quint8 (0..255) and (x - zero point) does not fit a byte, but
// x - 128 does: it is x ^ 0x80 read as an s8. The kernels multiply those s8 by the s8 weights
// with __dp4a or the tensor cores (both s8 x s8, exact int32 sums) and add, per output channel,
// Int8ConvArgs::compensation = (128 - zero point) x sum(w), made in plan (kernels/gpu/gpu_conv.cpp):
//   sum (x - zp) w = sum (x - 128) w + (128 - zp) sum w.
// A padded tap reads the zero point itself (the real 0), whose two terms cancel; taps past the end
// of the reduction (it is padded to 32) have zero weights.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/cuda/implicit_gemm.cuh"

namespace convlab::cuda {

// Taps per reduction step: 8 words of four s8, one m16n8k32's k.
constexpr int kInt8StepTaps = 32, kInt8StepWords = kInt8StepTaps / 4;

__host__ __device__ constexpr int int8_padded_taps(int taps) { return round_up(taps, kInt8StepTaps); }

// K rows of the C*R*S taps in OIHW order, each padded with zeros to a multiple of 32 bytes, so a
// step of a row is 8 aligned words.
inline std::vector<signed char> int8_gemm_weights(const ConvProblem& p, std::span<const std::int8_t> oihw) {
  const auto taps = static_cast<int>(p.c * p.r * p.s), padded = int8_padded_taps(taps);
  std::vector<signed char> w(static_cast<std::size_t>(p.k) * padded, 0);
  for (std::int64_t k = 0; k < p.k; ++k)
    for (int t = 0; t < taps; ++t) w[static_cast<std::size_t>(k * padded + t)] = oihw[static_cast<std::size_t>(k * taps + t)];
  return w;
}

// Word `word` (taps 4 word .. 4 word + 3) of output channel k's weights, 0 past the last channel.
__device__ __forceinline__ unsigned int8_weight_word(const Int8ConvArgs& a, int k, int word) {
  if (k >= a.p.k) return 0;
  const int row_words = int8_padded_taps(a.p.c * a.p.r * a.p.s) / 4;
  return __ldg(reinterpret_cast<const unsigned*>(a.weight) + static_cast<long long>(k) * row_words + word);
}

// Taps 4 word .. 4 word + 3 of one output pixel's im2col column, each as x ^ 0x80 (an s8), the
// first in the lowest byte. A tap outside the image reads the zero point; past the last pixel or
// the last tap anything will do (zero weights or no output), the zero point too.
__device__ __forceinline__ unsigned int8_gather_word(const Int8ConvArgs& a, const PixelOrigin& o, int word) {
  const ConvShape& p = a.p;
  const int rs = p.r * p.s, taps = p.c * rs;
  unsigned packed = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int kd = 4 * word + i;
    unsigned x = static_cast<unsigned>(a.in_zero_point);
    if (o.image >= 0 && kd < taps) {
      const int c = kd / rs, t = kd % rs;
      const int y = o.y0 + t / p.s * p.dil_h, xx = o.x0 + t % p.s * p.dil_w;
      if (y >= 0 && y < p.h && xx >= 0 && xx < p.w) x = __ldg(a.in + o.image + (static_cast<long long>(c) * p.h + y) * p.w + xx);
    }
    packed |= (x ^ 0x80u) << (8 * i);
  }
  return packed;
}

// kernels/common/quantize.hpp's requantize_one on the device, operation for operation (one
// rounding conversion, one fused multiply-add, the clamp before a round-half-to-even conversion), so
// that the bytes are the oracle's. `acc` is the s8 x s8 sum; the compensation makes it exact.
__device__ __forceinline__ unsigned char int8_requantize(const Int8ConvArgs& a, int k, int acc) {
  // Unsigned: the two terms may pass 2^31 on the way to a sum that fits; the GPU wraps as this does.
  const int exact = static_cast<int>(static_cast<unsigned>(acc) + static_cast<unsigned>(a.compensation[k]));
  float y = fmaf(static_cast<float>(exact), a.multiplier[k], a.offset[k]);
  y = fminf(fmaxf(y, -65536.0f), 65536.0f);  // kRequantLimit: far beyond saturation, no int overflow
  const int q = __float2int_rn(y) + a.out_zero_point;
  return static_cast<unsigned char>(q < a.lo ? a.lo : q > a.hi ? a.hi : q);
}

// The step loop both kernels run, double-buffered as cuda.02's: load(step) fetches a step's words
// into the thread's registers, store(buffer) puts them in shared buffer 0 or 1, multiply(buffer)
// works on one buffer while the next step's loads are in flight; one barrier per step.
template <class Load, class Store, class Multiply>
__device__ __forceinline__ void int8_gemm_steps(int steps, Load&& load, Store&& store, Multiply&& multiply) {
  load(0);
  store(0);
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    const int cur = step % 2;
    const bool more = step + 1 < steps;
    if (more) load(step + 1);
    multiply(cur);
    if (more) store(1 - cur);  // the other buffer was last read before the previous barrier
    __syncthreads();
  }
}

// Output (k, pixel over the whole batch) in NCHW, requantised; nothing past the last channel or pixel.
__device__ __forceinline__ void int8_store(const Int8ConvArgs& a, int k, long long pix, int acc) {
  const long long plane = static_cast<long long>(a.p.oh) * a.p.ow;
  if (k >= a.p.k || pix >= plane * a.p.n) return;
  a.out[(pix / plane * a.p.k + k) * plane + pix % plane] = int8_requantize(a, k, acc);
}

}  // namespace convlab::cuda
