// The implicit-GEMM main loop shared by cuda.02_implicit_gemm and cuda.06_implicit_gemm_splitk:
// the im2col tile gathered straight from the NCHW input into shared memory, the weight tile as
// float4 rows, both fetched into registers one step ahead of the multiply (double buffering, one
// barrier per step), multiplied by the register tile of kernels/cuda/gemm_tile.cuh. groups = 1.
#pragma once

#include "kernels/cuda/gemm_tile.cuh"

namespace convlab::cuda {

// Where the thread's im2col column (one output pixel) starts in the input.
struct PixelOrigin {
  long long image = -1;  // offset of the pixel's image in the input; -1 past the last pixel
  int y0 = 0, x0 = 0;    // top-left input coordinate under the kernel window
};

__device__ __forceinline__ PixelOrigin pixel_origin(const ConvShape& p, long long pix) {
  PixelOrigin o;
  const long long plane = static_cast<long long>(p.oh) * p.ow;
  if (pix >= plane * p.n) return o;
  const int q = static_cast<int>(pix % plane);
  o.image = pix / plane * p.c * p.h * p.w;
  o.y0 = q / p.ow * p.stride_h - p.pad_h;
  o.x0 = q % p.ow * p.stride_w - p.pad_w;
  return o;
}

// The thread's 4 values of the im2col tile: rows kd0 + tid / 64 + 4i, column tid % 64.
__device__ __forceinline__ void gather_inputs(const ConvArgs& a, const PixelOrigin& o, int kd_total, int kd0, float (&v)[4]) {
  const ConvShape& p = a.p;
  const int rs = p.r * p.s;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int kd = kd0 + threadIdx.x / kGemmBN + 4 * i;
    v[i] = 0.0f;
    if (o.image < 0 || kd >= kd_total) continue;
    const int c = kd / rs, t = kd % rs;
    const int y = o.y0 + t / p.s * p.dil_h, x = o.x0 + t % p.s * p.dil_w;
    if (y >= 0 && y < p.h && x >= 0 && x < p.w) v[i] = __ldg(a.in + o.image + (static_cast<long long>(c) * p.h + y) * p.w + x);
  }
}

__device__ __forceinline__ void store_inputs(float (*bs)[kGemmBN], const float (&v)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) bs[threadIdx.x / kGemmBN + 4 * i][threadIdx.x % kGemmBN] = v[i];
}


// acc += the tile's products over reduction steps [step_begin, step_end) (kGemmBK taps each) for
// output channels k0.. and pixels pix0.. (counted over the whole batch). `as` and `bs` are the
// kernel's two shared-memory buffers of each tile.
__device__ __forceinline__ void implicit_gemm_steps(const ConvArgs& a, int k0, long long pix0, int step_begin, int step_end,
                                                    float (*as)[kGemmBK][kGemmBM], float (*bs)[kGemmBK][kGemmBN],
                                                    float (&acc)[4][4]) {
  if (step_begin >= step_end) return;
  const int kd_total = a.p.c * a.p.r * a.p.s;
  const PixelOrigin origin = pixel_origin(a.p, pix0 + threadIdx.x % kGemmBN);
  float4 w = gemm_load_weights(a, kd_total, step_begin * kGemmBK, k0);
  float x[4];
  gather_inputs(a, origin, kd_total, step_begin * kGemmBK, x);
  gemm_store_weights(as[0], w);
  store_inputs(bs[0], x);
  __syncthreads();
  for (int step = step_begin; step < step_end; ++step) {
    const int cur = (step - step_begin) % 2;
    const bool more = step + 1 < step_end;
    if (more) {  // in flight while the tile below is multiplied
      w = gemm_load_weights(a, kd_total, (step + 1) * kGemmBK, k0);
      gather_inputs(a, origin, kd_total, (step + 1) * kGemmBK, x);
    }
    gemm_multiply(as[cur], bs[cur], acc);
    if (more) {  // the other buffer was last read before the previous barrier
      gemm_store_weights(as[1 - cur], w);
      store_inputs(bs[1 - cur], x);
    }
    __syncthreads();
  }
}

}  // namespace convlab::cuda
