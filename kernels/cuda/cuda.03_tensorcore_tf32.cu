// cuda.03_tensorcore_tf32: the implicit GEMM on tensor cores, in TF32.
//
// What changes against cuda.02: the 64 x 64 tile is multiplied by tensor cores through WMMA
//   (16 x 16 x 8 TF32 fragments): 4 warps, each owning a 32 x 32 quarter (2 x 2 accumulator
//   fragments). Inputs and weights are rounded to TF32 (10 mantissa bits) as they are staged in
//   shared memory; products are accumulated in FP32. As in cuda.02 the next 32-tap step is
//   fetched into registers while the current one is multiplied (two shared buffers, one barrier
//   per step). The accumulators go through shared memory once more (reusing the staging buffers)
//   so that the epilogue (bias, residual, activation) writes NCHW like every kernel.
// Why faster: a tensor core does a 16 x 16 x 8 product per instruction, several times the FP32
//   FMA throughput (H100/H200: ~8x dense TF32 vs FP32 on paper), so the gather and the staging,
//   not the arithmetic, bound this kernel. The price is precision: the error bound is that of
//   TF32 rounding (2^-11 per operand, see the error_scale beside its list entry), so it is
//   validated with its own tolerance. The CPU emulator runs it through a model of WMMA's results
//   (kernels/simt/wmma.hpp), not of its speed.
// groups = 1; any stride, padding and dilation. Needs sm_80 or later.
// Benchmark: convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.03_tensorcore_tf32
#if defined(__CUDACC__)
#include <mma.h>
#else
#include "kernels/simt/wmma.hpp"
#endif

#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

namespace {
constexpr int kBM = kTf32Tile, kBN = kTf32Tile, kBK = 32, kPad = 4;  // padding staggers shared-memory banks
constexpr int kALd = kBK + kPad, kBLd = kBN + kPad;  // row strides: weights K x kd, im2col kd x pixels
constexpr int kAFloats = kBM * kALd, kBFloats = kBK * kBLd, kCFloats = kBM * kBLd;
constexpr int kStagingFloats = 2 * (kAFloats + kBFloats);
constexpr int kSharedFloats = kStagingFloats > kCFloats ? kStagingFloats : kCFloats;
constexpr int kPerThread = kBM * kBK / kTf32Threads;  // weights (and im2col values) each thread stages
static_assert(kBK * kBN / kTf32Threads == kPerThread, "the two tiles must split evenly over the threads");

// One step's tiles in the thread's registers, on their way to shared memory.
struct Staged {
  float w[kPerThread], x[kPerThread];
};

// Weights: element i = tid + 128 j of the 64 x 32 tile, row-major, so a warp reads 32
// consecutive taps of one output channel. im2col: rows tid / 64 + 2 j of column tid % 64, so a
// warp reads 32 consecutive pixels.
__device__ __forceinline__ void tf32_load(const ConvArgs& a, int k0, int kd0, long long image, int y0, int x0, Staged& s) {
  const ConvShape& p = a.p;
  const int rs = p.r * p.s, kd_total = p.c * rs, tid = threadIdx.x;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int i = tid + kTf32Threads * j, m = i / kBK, kk = i % kBK;
    s.w[j] = k0 + m < p.k && kd0 + kk < kd_total ? __ldg(a.weight + static_cast<long long>(k0 + m) * kd_total + kd0 + kk) : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int kd = kd0 + tid / kBN + (kTf32Threads / kBN) * j;
    float v = 0.0f;
    if (image >= 0 && kd < kd_total) {
      const int c = kd / rs, t = kd % rs;
      const int y = y0 + t / p.s * p.dil_h, x = x0 + t % p.s * p.dil_w;
      if (y >= 0 && y < p.h && x >= 0 && x < p.w) v = __ldg(a.in + image + (static_cast<long long>(c) * p.h + y) * p.w + x);
    }
    s.x[j] = v;
  }
}

__device__ __forceinline__ void tf32_store(const Staged& s, float* as, float* bs) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int i = tid + kTf32Threads * j;
    as[i / kBK * kALd + i % kBK] = nvcuda::wmma::__float_to_tf32(s.w[j]);
    bs[(tid / kBN + (kTf32Threads / kBN) * j) * kBLd + tid % kBN] = nvcuda::wmma::__float_to_tf32(s.x[j]);
  }
}

}  // namespace

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. 128 threads (4 warps).
// Weights: OIHW as given (row k holds its C*R*S taps).
__global__ void __launch_bounds__(kTf32Threads) conv_tensorcore_tf32(ConvArgs a) {
  using namespace nvcuda;
  __shared__ __align__(32) float smem[kSharedFloats];  // two staging buffers; then the accumulators
  const ConvShape& p = a.p;
  const int kd_total = p.c * p.r * p.s;
  const int k0 = blockIdx.y * kBM;
  const long long plane = static_cast<long long>(p.oh) * p.ow, pixels = plane * p.n;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kBN;
  const int warp = threadIdx.x / 32;
  const int wm = warp / 2 * 32, wn = warp % 2 * 32;  // the warp's quarter of the tile

  // Where this thread's im2col column (pixel pix0 + tid % 64) starts in the input.
  const long long pix = pix0 + threadIdx.x % kBN;
  long long image = -1;
  int y0 = 0, x0 = 0;
  if (pix < pixels) {
    const int q = static_cast<int>(pix % plane);
    image = pix / plane * p.c * p.h * p.w;
    y0 = q / p.ow * p.stride_h - p.pad_h;
    x0 = q % p.ow * p.stride_w - p.pad_w;
  }
  // Buffer b of each tile (computed, not indexed from a local array, which would live in memory).
  const auto as = [&](int b) { return smem + b * kAFloats; };
  const auto bs = [&](int b) { return smem + 2 * kAFloats + b * kBFloats; };

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  Staged staged;
  tf32_load(a, k0, 0, image, y0, x0, staged);
  tf32_store(staged, as(0), bs(0));
  __syncthreads();
  const int steps = ceil_div(kd_total, kBK);
  for (int step = 0; step < steps; ++step) {
    const int cur = step % 2;
    const bool more = step + 1 < steps;
    if (more) tf32_load(a, k0, (step + 1) * kBK, image, y0, x0, staged);  // in flight during the products
    for (int kk = 0; kk < kBK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], as(cur) + (wm + 16 * i) * kALd + kk, kALd);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], bs(cur) + kk * kBLd + wn + 16 * j, kBLd);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    if (more) tf32_store(staged, as(1 - cur), bs(1 - cur));  // last read before the previous barrier
    __syncthreads();
  }

  float* cs = smem;  // the staging buffers are free: every warp passed the last barrier
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(cs + (wm + 16 * i) * kBLd + wn + 16 * j, acc[i][j], kBLd, wmma::mem_row_major);
  __syncthreads();
  for (int i = threadIdx.x; i < kBM * kBN; i += kTf32Threads) {  // consecutive threads, consecutive pixels
    const int m = i / kBN, j = i % kBN;
    const int k = k0 + m;
    const long long q = pix0 + j;
    if (k >= p.k || q >= pixels) continue;
    const long long o = (q / plane * p.k + k) * plane + q % plane;
    a.out[o] = conv_epilogue(a, k, o, cs[m * kBLd + j]);
  }
}

}  // namespace convlab::cuda
