// The one place that knows, for each CUDA kernel: which problems it supports, how plan prepares
// its weights, and how it is launched (grid, block, shared memory). Launching goes through a
// `Launch` callable, so the same code drives the GPU (kernels/cuda/cuda_runtime.cu, where the
// only `<<< >>>` of the project lives) and the CPU emulator (kernels/cuda/emulated.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

enum class Variant {
  naive,
  smem_tiled,
  implicit_gemm,
  tensorcore_tf32,
  depthwise,
  pointwise,
  implicit_gemm_splitk,
  tensorcore_tf32_pipelined
};
std::string_view to_string(Variant v);

// A launch in plain numbers; each Launch turns it into its own dim3.
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};

// The variant a kernel id runs on problem p; cuda.auto chooses by rule (see dispatch.cpp).
// Throws InputError for an id that is not a CUDA kernel.
Variant variant_for(std::string_view kernel_id, const ConvProblem& p);
// Empty when `v` supports p, else why not.
std::string unsupported(Variant v, const ConvProblem& p);
// The rule every GPU kernel shares (CUDA's and Metal's): they index in 32 bits, so a tensor of
// 2^31 elements or more is refused. Empty when p fits.
std::string exceeds_32bit_indices(const ConvProblem& p);
// The kernel's weights as plan uploads them: OIHW, or transposed to C*R*S x round_up4(K) for the
// GEMM tiles (kernels/cuda/gemm_tile.cuh), or (cuda.07) OIHW with each row of C*R*S taps padded
// with zeros to a multiple of kTf32PipeBK.
std::vector<float> prepare_weights(Variant v, const ConvProblem& p, std::span<const float> oihw);
ConvShape to_shape(const ConvProblem& p);

// cuda.06's split of the reduction: `splits` blocks along grid z, `steps_per_split` steps of
// kGemmBK taps each. Depends on the problem alone, so results do not depend on the device.
struct SplitK {
  int splits = 1, steps_per_split = 1;
};
SplitK split_k(const ConvShape& p);
// Floats of device workspace a variant needs (cuda.06: the partial sums), 0 for most.
std::size_t workspace_floats(Variant v, const ConvShape& p);
int to_act(Activation a);

LaunchShape conv_launch(Variant v, const ConvShape& p);
LaunchShape elementwise_launch(long long count);  // one thread per element
LaunchShape warp_launch(long long warps);         // one warp per row / plane / output

// Whether `v` can do the pooling layer after the conv in its own last pass (a.pool): cuda.06,
// whose reduction kernel computes each output alone.
bool fuses_pool(Variant v);

// `workspace`: workspace_floats(v, a.p) floats of device memory (null when that is 0). a.pool
// must be kPoolNone unless fuses_pool(v): GpuConv refuses anything else when it plans.
template <class Launch>
void launch_conv(Launch& launch, Variant v, const ConvArgs& a, float* workspace) {
  const LaunchShape shape = conv_launch(v, a.p);
  switch (v) {
    case Variant::naive: return launch(shape, conv_naive, a);
    case Variant::smem_tiled: return launch(shape, conv_smem_tiled, a);
    case Variant::implicit_gemm: return launch(shape, conv_implicit_gemm, a);
    case Variant::tensorcore_tf32: return launch(shape, conv_tensorcore_tf32, a);
    case Variant::depthwise: return launch(shape, conv_depthwise, a);
    case Variant::pointwise: return launch(shape, conv_pointwise, a);
    case Variant::implicit_gemm_splitk: {
      const SplitK split = split_k(a.p);
      launch(shape, conv_implicit_gemm_splitk, a, workspace, split.steps_per_split);
      const auto* partial = static_cast<const float*>(workspace);
      const long long planes = static_cast<long long>(a.p.n) * a.p.k;
      if (a.pool.kind == kPoolGlobalAvg) return launch(warp_launch(planes), splitk_reduce_global_avg, a, partial, split.splits);
      const bool pooled = a.pool.kind != kPoolNone;
      const long long outputs = planes * (pooled ? a.pool.oh : a.p.oh) * (pooled ? a.pool.ow : a.p.ow);
      return launch(elementwise_launch(outputs), splitk_reduce, a, partial, split.splits);
    }
    case Variant::tensorcore_tf32_pipelined: return launch(shape, conv_tensorcore_tf32_pipelined, a);
  }
}

template <class Launch>
void launch_pool(Launch& launch, const PoolArgs& a, bool average) {
  launch(elementwise_launch(static_cast<long long>(a.planes) * a.oh * a.ow), pool2d, a, average ? 1 : 0);
}
template <class Launch>
void launch_global_avg_pool(Launch& launch, const float* in, int planes, int plane_size, float* out) {
  launch(warp_launch(planes), global_avg_pool, in, planes, plane_size, out);
}
template <class Launch>
void launch_linear(Launch& launch, const float* in, int batch, int in_features, const float* weight,
                   const float* bias, int out_features, float* out, bool relu) {
  launch(warp_launch(static_cast<long long>(batch) * out_features), linear, in, batch, in_features, weight, bias,
         out_features, out, relu ? 1 : 0);
}
template <class Launch>
void launch_add(Launch& launch, const float* a, const float* b, float* out, long long count, bool relu) {
  launch(elementwise_launch(count), add, a, b, out, count, relu ? 1 : 0);
}
template <class Launch>
void launch_softmax(Launch& launch, const float* in, int batch, int classes, float* out) {
  launch(warp_launch(batch), softmax, in, batch, classes, out);
}

}  // namespace convlab::cuda
