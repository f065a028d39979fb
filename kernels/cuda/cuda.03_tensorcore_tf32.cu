// cuda.03_tensorcore_tf32: the implicit GEMM on tensor cores, in TF32.
//
// What changes against cuda.02: the 64 x 64 tile is multiplied by tensor cores through WMMA
//   (16 x 16 x 8 TF32 fragments): 4 warps, each owning a 32 x 32 quarter (2 x 2 accumulator
//   fragments). Inputs and weights are rounded to TF32 (10 mantissa bits) as they are staged in
//   shared memory; products are accumulated in FP32. The accumulators go through shared memory
//   once more so that the epilogue (bias, residual, activation) writes NCHW like every kernel.
// Why faster: a tensor core does a 16 x 16 x 8 product per instruction, several times the FP32
//   FMA throughput (H100/H200: ~8x dense TF32 vs FP32 on paper). The price is precision: the
//   error bound is that of TF32 rounding (2^-11 per operand, see the error_scale beside its list
//   entry), so it is validated with its own tolerance. The CPU emulator runs it through a model
//   of WMMA's results (kernels/simt/wmma.hpp), not of its speed.
// Measured: on an H200, 0.64x cuDNN TF32 on resnet8's largest layer, 0.19x on the large reference
//   layer, where its global loads stall every step. A double-buffered version with 32-tap steps
//   was slower there (242 registers a thread, two blocks per SM): see bench/RESULTS.md.
// groups = 1; any stride, padding and dilation. Needs sm_80 or later.
// Run: build/convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.03_tensorcore_tf32
#if defined(__CUDACC__)
#include <mma.h>
#else
#include "kernels/simt/wmma.hpp"
#endif

#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

// Block tile side (channels and pixels), threads per block (4 warps).
constexpr int kTf32Tile = 64, kTf32Threads = 128;

namespace {
constexpr int kBM = kTf32Tile, kBN = kTf32Tile, kBK = 16, kPad = 4;  // padding staggers shared-memory banks
}

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. 128 threads (4 warps).
// Weights: OIHW as given (row k holds its C*R*S taps).
__global__ void __launch_bounds__(kTf32Threads) conv_tensorcore_tf32(ConvArgs a) {
  using namespace nvcuda;
  __shared__ __align__(32) float as[kBM][kBK + kPad];  // weights, row-major K x kd
  __shared__ __align__(32) float bs[kBK][kBN + kPad];  // im2col, row-major kd x pixels
  __shared__ __align__(32) float cs[kBM][kBN + kPad];  // accumulators on their way out
  const ConvShape& p = a.p;
  const int rs = p.r * p.s, kd_total = p.c * rs;
  const int k0 = blockIdx.y * kBM;
  const long long plane = static_cast<long long>(p.oh) * p.ow, pixels = plane * p.n;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kBN;
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / 2 * 32, wn = warp % 2 * 32;  // the warp's quarter of the tile

  // This thread gathers column tid % 64 of the im2col tile (rows tid / 64 + 2i).
  const long long pix = pix0 + tid % kBN;
  long long image = -1;
  int y0 = 0, x0 = 0;
  if (pix < pixels) {
    const int q = static_cast<int>(pix % plane);
    image = pix / plane * p.c * p.h * p.w;
    y0 = q / p.ow * p.stride_h - p.pad_h;
    x0 = q % p.ow * p.stride_w - p.pad_w;
  }

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int kd0 = 0; kd0 < kd_total; kd0 += kBK) {
    for (int i = tid; i < kBM * kBK; i += kTf32Threads) {  // weights: coalesced along kd
      const int m = i / kBK, kk = i % kBK;
      const bool inside = k0 + m < p.k && kd0 + kk < kd_total;
      as[m][kk] = wmma::__float_to_tf32(inside ? __ldg(a.weight + static_cast<long long>(k0 + m) * kd_total + kd0 + kk) : 0.0f);
    }
    for (int kk = tid / kBN; kk < kBK; kk += kTf32Threads / kBN) {  // im2col: coalesced along pixels
      const int kd = kd0 + kk;
      float v = 0.0f;
      if (image >= 0 && kd < kd_total) {
        const int c = kd / rs, t = kd % rs;
        const int y = y0 + t / p.s * p.dil_h, x = x0 + t % p.s * p.dil_w;
        if (y >= 0 && y < p.h && x >= 0 && x < p.w) v = __ldg(a.in + image + (static_cast<long long>(c) * p.h + y) * p.w + x);
      }
      bs[kk][tid % kBN] = wmma::__float_to_tf32(v);
    }
    __syncthreads();
    for (int kk = 0; kk < kBK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &as[wm + 16 * i][kk], kBK + kPad);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &bs[kk][wn + 16 * j], kBN + kPad);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }

  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm + 16 * i][wn + 16 * j], acc[i][j], kBN + kPad, wmma::mem_row_major);
  __syncthreads();
  write_tile_nchw(a, &cs[0][0], kBN + kPad, kBM, kBN, k0, pix0, tid, kTf32Threads);
}

// Its row: groups 1; OIHW weights.
struct tensorcore_tf32 : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    launch(LaunchShape{{blocks(output_pixels(a.p), kTf32Tile), blocks(a.p.k, kTf32Tile), 1}, {kTf32Threads, 1, 1}, 0},
           conv_tensorcore_tf32, a);
  }
};

}  // namespace convlab::cuda
