// Every CUDA kernel convlab launches, declared once. The definitions live in one .cu file per
// variant (device code only, no launches); the launches live in kernels/cuda/dispatch.hpp. The
// same declarations serve nvcc and the CPU emulator (kernels/simt/), which compiles those .cu
// files as plain C++.
#pragma once

#include "kernels/cuda/conv_args.hpp"

namespace convlab::cuda {

// cuda.01_smem_tiled: output tile side, output channels per block, input channels per chunk.
constexpr int kSmemTile = 16, kSmemOutChannels = 8, kSmemInChannels = 8;
// cuda.02_implicit_gemm and cuda.05_pointwise (kernels/cuda/gemm_tile.cuh): block tile of
// output channels x pixels, the reduction step, threads per block.
constexpr int kGemmBM = 64, kGemmBN = 64, kGemmBK = 16, kGemmThreads = 256;
// cuda.06_implicit_gemm_splitk: the blocks it aims for, about one per multiprocessor of a large
// GPU (an H100 or H200 has 132).
constexpr int kSplitKTargetBlocks = 128;
// cuda.03_tensorcore_tf32: block tile side (channels and pixels), threads per block (4 warps).
constexpr int kTf32Tile = 64, kTf32Threads = 128;
// cuda.07_tensorcore_tf32_pipelined: block tile of output channels x pixels, taps per reduction
// step, steps in flight, threads per block (4 warps).
constexpr int kTf32PipeBM = 64, kTf32PipeBN = 128, kTf32PipeBK = 16, kTf32PipeStages = 3, kTf32PipeThreads = 128;

__global__ void conv_naive(ConvArgs a);
__global__ void conv_smem_tiled(ConvArgs a);
__global__ void conv_implicit_gemm(ConvArgs a);
__global__ void conv_tensorcore_tf32(ConvArgs a);
__global__ void conv_depthwise(ConvArgs a);
__global__ void conv_pointwise(ConvArgs a);
__global__ void conv_implicit_gemm_splitk(ConvArgs a, float* partial, int steps_per_split);
__global__ void conv_tensorcore_tf32_pipelined(ConvArgs a);
__global__ void splitk_reduce(ConvArgs a, const float* partial, int splits);
__global__ void splitk_reduce_global_avg(ConvArgs a, const float* partial, int splits);

struct PoolArgs {
  const float* in;
  float* out;
  int planes, h, w, oh, ow;  // planes = n * c
  int kernel, stride, pad;
};
__global__ void pool2d(PoolArgs a, int average);
__global__ void global_avg_pool(const float* in, int planes, int plane_size, float* out);
__global__ void linear(const float* in, int batch, int in_features, const float* weight, const float* bias,
                       int out_features, float* out, int relu);
__global__ void add(const float* a, const float* b, float* out, long long count, int relu);
__global__ void softmax(const float* in, int batch, int classes, float* out);

}  // namespace convlab::cuda
