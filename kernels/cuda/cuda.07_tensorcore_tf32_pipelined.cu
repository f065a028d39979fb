// cuda.07_tensorcore_tf32_pipelined: cuda.03's tensor-core GEMM fed by a pipeline of asynchronous
// copies.
//
// What changes against cuda.03: there, each 16-tap step loads its tiles through registers, waits
//   at a barrier, multiplies and waits again, so the tensor cores idle while loads are in flight.
//   Here the tiles are copied global -> shared by sm_80's cp.async (kernels/cuda/async_copy.cuh),
//   three steps in flight, one barrier per step; the block tile is 64 channels x 128 pixels, each
//   of the 4 warps 64 x 32 (6 fragment loads for 8 products, against cuda.03's 4 for 4); weight
//   rows are padded in plan to whole 16-tap steps (four aligned 16-byte copies each); im2col
//   copies are one float each, the padding zero-filled by the copy. TF32 rounding moves from the
//   shared tiles to the fragments (as the CUDA guide does), since the copies cannot convert.
// Why faster (expected): the copies overlap the products, and shared-memory reads per product
//   fall by a quarter. It aims at the 0.19x of cuDNN TF32 that held cuda.03 on the reference layer.
// Measured: not yet measured on a GPU (bench/RESULTS.md); bench/gpu-check.sh times it beside
//   cuda.03 and cuDNN TF32. Precision as cuda.03 (error_scale beside its list entry).
// groups = 1; any stride, padding and dilation. Needs sm_80 or later.
// Run: build/convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.03_tensorcore_tf32,cuda.07_tensorcore_tf32_pipelined
#if defined(__CUDACC__)
#include <mma.h>
#else
#include "kernels/simt/wmma.hpp"
#endif

#include <algorithm>

#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

// Block tile of output channels x pixels, taps per reduction step, steps in flight, threads per
// block (4 warps).
constexpr int kTf32PipeBM = 64, kTf32PipeBN = 128, kTf32PipeBK = 16, kTf32PipeStages = 3, kTf32PipeThreads = 128;

namespace {
template <class Fragment>
__device__ __forceinline__ void round_to_tf32(Fragment& f) {
  for (int t = 0; t < f.num_elements; ++t) f.x[t] = nvcuda::wmma::__float_to_tf32(f.x[t]);
}
}  // namespace

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. kTf32PipeThreads threads.
// Weights: K rows of whole reduction steps (C*R*S rounded up to kTf32PipeBK, zeros past C*R*S).
__global__ void __launch_bounds__(kTf32PipeThreads) conv_tensorcore_tf32_pipelined(ConvArgs a) {
  using namespace nvcuda;
  // (Local names: the CPU emulator compiles every kernel file into one translation unit.)
  constexpr int kBM = kTf32PipeBM, kBN = kTf32PipeBN, kBK = kTf32PipeBK, kStages = kTf32PipeStages;
  constexpr int kThreads = kTf32PipeThreads;
  // Shared rows padded by 4 floats so that the fragments' rows fall in different banks; every
  // fragment pointer stays 32-byte aligned, as load_matrix_sync needs.
  constexpr int kAStride = kBK + 4, kBStride = kBN + 4, kCStride = kBN + 4;
  constexpr int kAFloats = kBM * kAStride, kStageFloats = kAFloats + kBK * kBStride;
  static_assert(kBN == kThreads, "each thread copies one pixel column of the im2col tile");
  static_assert(kBM * kCStride <= kStages * kStageFloats, "the epilogue's tile reuses the pipeline's buffers");
  __shared__ __align__(128) float smem[kStages * kStageFloats];
  const ConvShape& p = a.p;
  const int kd_total = p.c * p.r * p.s, steps = ceil_div(kd_total, kBK), kd_padded = steps * kBK;
  const int k0 = blockIdx.y * kBM;
  const long long plane = static_cast<long long>(p.oh) * p.ow, pixels = plane * p.n;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kBN;
  const int tid = threadIdx.x, warp = tid / 32;

  // This thread's pixel column of the im2col tile, and the next tap (c, r, s) it copies.
  long long image = -1;
  int y0 = 0, x0 = 0, c = 0, r = 0, s = 0, kd = 0;
  if (pix0 + tid < pixels) {
    const int q = static_cast<int>((pix0 + tid) % plane);
    image = (pix0 + tid) / plane * p.c * p.h * p.w;
    y0 = q / p.ow * p.stride_h - p.pad_h;
    x0 = q % p.ow * p.stride_w - p.pad_w;
  }
  // Issues the copies of reduction step `step` into buffer `buffer` (steps in order: the tap
  // walk above is shared between calls).
  const auto copy_step = [&](int step, int buffer) {
    float* as = smem + buffer * kStageFloats;
    float* bs = as + kAFloats;
    for (int chunk = tid; chunk < kBM * kBK / 4; chunk += kThreads) {
      const int m = chunk / (kBK / 4), col = chunk % (kBK / 4) * 4;
      const bool inside = k0 + m < p.k;
      const float* src = inside ? a.weight + static_cast<long long>(k0 + m) * kd_padded + step * kBK + col : a.weight;
      copy_async_16(as + m * kAStride + col, src, inside);
    }
    for (int kk = 0; kk < kBK; ++kk) {
      const int y = y0 + r * p.dil_h, x = x0 + s * p.dil_w;
      const bool inside = image >= 0 && kd < kd_total && y >= 0 && y < p.h && x >= 0 && x < p.w;
      const float* src = inside ? a.in + image + (static_cast<long long>(c) * p.h + y) * p.w + x : a.in;
      copy_async_4(bs + kk * kBStride + tid, src, inside);
      ++kd;
      if (++s == p.s) {
        s = 0;
        if (++r == p.r) r = 0, ++c;
      }
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];  // the warp's 64 x 32
  for (auto& row : acc)
    for (auto& f : row) wmma::fill_fragment(f, 0.0f);

  for (int step = 0; step < kStages - 1; ++step) {
    if (step < steps) copy_step(step, step);
    commit_copies();  // one group per step, empty or not, so that the count below holds
  }
  for (int step = 0; step < steps; ++step) {
    wait_copies<kStages - 2>();  // this thread's copies of `step` have landed
    __syncthreads();             // everyone's have, and every warp is done with step - 1's buffer
    if (step + kStages - 1 < steps) copy_step(step + kStages - 1, (step + kStages - 1) % kStages);
    commit_copies();
    const float* as = smem + step % kStages * kStageFloats;
    const float* bs = as + kAFloats;
    for (int kk = 0; kk < kBK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
      for (int i = 0; i < 4; ++i) {
        wmma::load_matrix_sync(fa[i], as + 16 * i * kAStride + kk, kAStride);
        round_to_tf32(fa[i]);
      }
      for (int j = 0; j < 2; ++j) {
        wmma::load_matrix_sync(fb[j], bs + kk * kBStride + warp * 32 + 16 * j, kBStride);
        round_to_tf32(fb[j]);
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
  wait_copies<0>();
  __syncthreads();  // every buffer is free: the accumulators go out through them

  float* cs = smem;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(cs + 16 * i * kCStride + warp * 32 + 16 * j, acc[i][j], kCStride, wmma::mem_row_major);
  __syncthreads();
  write_tile_nchw(a, cs, kCStride, kBM, kBN, k0, pix0, tid, kThreads);
}

// Its row: groups 1; OIHW weights with each row of C*R*S taps padded with zeros to whole
// reduction steps, so that every row of the weight tile is four aligned 16-byte copies.
struct tensorcore_tf32_pipelined : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  static std::vector<float> weights(const ConvProblem& p, std::span<const float> oihw) {
    const std::int64_t kd_total = p.c * p.r * p.s, padded = round_up(static_cast<int>(kd_total), kTf32PipeBK);
    std::vector<float> t(static_cast<std::size_t>(p.k * padded), 0.0f);
    for (std::int64_t k = 0; k < p.k; ++k) std::copy_n(oihw.begin() + k * kd_total, kd_total, t.begin() + k * padded);
    return t;
  }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    launch(LaunchShape{{blocks(output_pixels(a.p), kTf32PipeBN), blocks(a.p.k, kTf32PipeBM), 1}, {kTf32PipeThreads, 1, 1}, 0},
           conv_tensorcore_tf32_pipelined, a);
  }
};

}  // namespace convlab::cuda
