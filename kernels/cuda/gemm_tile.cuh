// The register-blocked GEMM tile shared by cuda.02_implicit_gemm and cuda.05_pointwise: the two
// differ only in how they fetch the input tile (an im2col gather versus contiguous rows).
//
// A block of 256 threads computes a 64 (output channels) x 64 (output pixels) tile of
//   out[k][pixel] = sum_kd W[k][kd] * X[kd][pixel]
// stepping through kd 16 at a time. Thread (tx, ty) = (tid % 16, tid / 16) owns 4 channels
// (ty*4..) x 4 pixels (tx*4..): per kd step it reads one float4 of weights and one float4 of
// inputs from shared memory and does 16 FMAs, so shared-memory bandwidth no longer bounds it.
// The weights arrive transposed (Wt[kd][Kp], Kp = K rounded up to 4, zero-filled) so that a
// tile row of weights is one aligned float4 per thread.
#pragma once

#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

__host__ __device__ constexpr int round_up4(int x) { return (x + 3) / 4 * 4; }

// The weights as the tile reads them, transposed once in plan: C*R*S rows of K values (K rounded
// up to 4, zero-filled), so that a tile row of weights is one aligned float4 per thread.
inline std::vector<float> gemm_weights(const ConvProblem& p, std::span<const float> oihw) {
  const std::int64_t kd_total = p.c_per_group() * p.r * p.s, kp = round_up4(static_cast<int>(p.k));
  std::vector<float> t(static_cast<std::size_t>(kd_total * kp), 0.0f);
  for (std::int64_t k = 0; k < p.k; ++k)
    for (std::int64_t kd = 0; kd < kd_total; ++kd)
      t[static_cast<std::size_t>(kd * kp + k)] = oihw[static_cast<std::size_t>(k * kd_total + kd)];
  return t;
}

// Fetches the thread's float4 of the weight tile rows kd0.. (kk = tid / 16, columns (tid % 16)*4).
__device__ __forceinline__ float4 gemm_load_weights(const ConvArgs& a, int kd_total, int kd0, int k0) {
  const int tid = threadIdx.x, kk = tid / 16, m = (tid % 16) * 4;
  const int kp = round_up4(a.p.k);
  if (kd0 + kk >= kd_total || k0 + m >= kp) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  return __ldg(reinterpret_cast<const float4*>(a.weight + static_cast<long long>(kd0 + kk) * kp + k0 + m));
}

__device__ __forceinline__ void gemm_store_weights(float (*as)[kGemmBM], float4 v) {
  const int tid = threadIdx.x;
  *reinterpret_cast<float4*>(&as[tid / 16][(tid % 16) * 4]) = v;
}

// row += w * x, one weight times the thread's 4 pixels.
__device__ __forceinline__ void fma_row(float (&row)[4], float w, float4 x) {
  row[0] += w * x.x;
  row[1] += w * x.y;
  row[2] += w * x.z;
  row[3] += w * x.w;
}

// acc += As^T Bs over one kd step of the tile.
__device__ __forceinline__ void gemm_multiply(const float (*as)[kGemmBM], const float (*bs)[kGemmBN], float (&acc)[4][4]) {
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
  for (int kk = 0; kk < kGemmBK; ++kk) {
    const float4 w = *reinterpret_cast<const float4*>(&as[kk][ty * 4]);
    const float4 x = *reinterpret_cast<const float4*>(&bs[kk][tx * 4]);
    fma_row(acc[0], w.x, x);
    fma_row(acc[1], w.y, x);
    fma_row(acc[2], w.z, x);
    fma_row(acc[3], w.w, x);
  }
}

// Writes the thread's 4 x 4 outputs through the epilogue. pix0 is the tile's first pixel counted
// over the whole batch (n * oh * ow + pixel), pixels the end of the valid ones; a tile may
// straddle images. When an output plane holds a multiple of 4 pixels, the thread's 4 pixels are
// one aligned float4.
__device__ __forceinline__ void gemm_store_outputs(const ConvArgs& a, const float (&acc)[4][4], int k0, long long pix0,
                                                   long long pixels) {
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long plane = static_cast<long long>(a.p.oh) * a.p.ow;
  const long long pix = pix0 + tx * 4;
  const bool vector = plane % 4 == 0 && pix + 3 < pixels;
#pragma unroll  // fully: acc must stay in registers, so every index here is a constant
  for (int i = 0; i < 4; ++i) {
    const int k = k0 + ty * 4 + i;
    if (k >= a.p.k) continue;
    if (vector) {
      const long long o = (pix / plane * a.p.k + k) * plane + pix % plane;
      float4 v;
      v.x = conv_epilogue(a, k, o, acc[i][0]);
      v.y = conv_epilogue(a, k, o + 1, acc[i][1]);
      v.z = conv_epilogue(a, k, o + 2, acc[i][2]);
      v.w = conv_epilogue(a, k, o + 3, acc[i][3]);
      *reinterpret_cast<float4*>(a.out + o) = v;
      continue;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (pix + j >= pixels) continue;
      const long long o = ((pix + j) / plane * a.p.k + k) * plane + (pix + j) % plane;
      a.out[o] = conv_epilogue(a, k, o, acc[i][j]);
    }
  }
}

}  // namespace convlab::cuda
