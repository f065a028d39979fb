// What every CUDA kernel file includes: the arguments and epilogue (kernels/cuda/epilogue.cuh),
// the launch shapes, and the defaults of a kernel's row.
//
// A kernel file (kernels/cuda/cuda.NN_technique.cu) defines its __global__ function(s) and,
// beside them, a struct named after its symbol in cuda_kernels.inc, deriving from KernelDefaults
// and overriding what differs:
//   template <class Launch> static void launch(Launch&, const ConvArgs&, float* workspace);
//                            its grid, block and shared memory (required);
//   static std::string unsupported(const ConvProblem&);   why not, "" when supported;
//   static std::vector<float> weights(const ConvProblem&, std::span<const float> oihw);
//                            the layout plan uploads, OIHW by default;
//   static std::size_t workspace_floats(const ConvShape&); device scratch, 0 by default;
//   static constexpr bool fuses_pool;                      can do the pool after it (ConvArgs::pool).
// The runtimes (cuda_runtime.cu, emulated.cu) expand the list into their tables from these.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/problem.hpp"
#include "kernels/cuda/dispatch.hpp"
#include "kernels/cuda/epilogue.cuh"
#include "kernels/gpu/conv_kernel.hpp"

namespace convlab::cuda {

// cuda.02_implicit_gemm, cuda.05_pointwise and cuda.06 (kernels/cuda/gemm_tile.cuh): block tile
// of output channels x pixels, the reduction step, threads per block.
constexpr int kGemmBM = 64, kGemmBN = 64, kGemmBK = 16, kGemmThreads = 256;
// cuda.06_implicit_gemm_splitk: the blocks it aims for, about one per multiprocessor of a large
// GPU (an H100 or H200 has 132).
constexpr int kSplitKTargetBlocks = 128;

// Limits of every launch: grid y and z, and static shared memory without a per-kernel opt-in.
constexpr unsigned kMaxGridYZ = 65535;
constexpr unsigned kMaxStaticSharedBytes = 48 * 1024;

// A launch in plain numbers; each Launch turns it into its own dim3.
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};

inline unsigned blocks(long long count, long long per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}
inline long long output_pixels(const ConvShape& p) { return static_cast<long long>(p.n) * p.oh * p.ow; }
inline LaunchShape elementwise_launch(long long count) { return {{blocks(count, 256), 1, 1}, {256, 1, 1}, 0}; }  // a thread per element
inline LaunchShape warp_launch(long long warps) { return {{blocks(warps * 32, 256), 1, 1}, {256, 1, 1}, 0}; }  // a warp per row

// What a kernel's row says when its file does not: every problem (the 32-bit rule aside, which
// kernels/gpu/gpu_conv.hpp applies to all), OIHW weights, no workspace, no fused pool.
struct KernelDefaults {
  static std::string unsupported(const ConvProblem&) { return {}; }
  static std::vector<float> weights(const ConvProblem& p, std::span<const float> oihw) { return gpu::oihw_weights(p, oihw); }
  static std::size_t workspace_floats(const ConvShape& p) { return gpu::no_workspace(p); }
  static constexpr bool fuses_pool = false;
};

// Support rules several kernels share: the GEMM kernels take groups 1 only; kernels with a
// block per image (grid z) take at most kMaxGridYZ images.
inline std::string ungrouped_only(const ConvProblem& p) { return p.groups == 1 ? std::string() : "groups > 1"; }
inline std::string batch_over_grid_z(const ConvProblem& p) {
  return p.n > kMaxGridYZ ? "batch " + std::to_string(p.n) + " over " + std::to_string(kMaxGridYZ) : std::string();
}

// The ops a network needs besides convolutions (kernels/cuda/ops.cu).
__global__ void pool2d(PoolArgs a, int average);
__global__ void global_avg_pool(const float* in, int planes, int plane_size, float* out);
__global__ void linear(const float* in, int batch, int in_features, const float* weight, const float* bias,
                       int out_features, float* out, int relu);
__global__ void add(const float* a, const float* b, float* out, long long count, int relu);
__global__ void softmax(const float* in, int batch, int classes, float* out);
// An int8 network's (kernels/cuda/ops_int8.cu).
__global__ void quantize_u8(const float* in, unsigned char* out, long long count, float scale, int zero_point);
__global__ void dequantize_u8(const unsigned char* in, float* out, long long count, float scale, int zero_point);
__global__ void pool2d_u8(PoolArgsU8 a, int average);
__global__ void global_avg_pool_u8(const unsigned char* in, int planes, int plane_size, unsigned char* out);
__global__ void add_u8(AddArgsU8 a);

}  // namespace convlab::cuda
