#include "kernels/cuda/dispatch.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

namespace {
// cuda.auto's rule, in the order a student would reason: depthwise layers are memory-bound and
// get their own kernel; a 1x1 layer is a plain GEMM; any other ungrouped layer is an implicit
// GEMM, its reduction split across blocks when its tiles alone cannot fill the GPU; grouped
// layers that are not depthwise fall back to the naive kernel. Never TF32: auto keeps FP32
// accuracy (ask for cuda.03 by name).
std::string_view auto_choice(const ConvProblem& p) {
  if (p.is_depthwise()) return "cuda.04_depthwise";
  if (one_by_one(p)) return "cuda.05_pointwise";
  if (p.groups != 1) return "cuda.00_naive";
  return split_k(gpu::to_shape(p)).splits > 1 ? "cuda.06_implicit_gemm_splitk" : "cuda.02_implicit_gemm";
}
}  // namespace

const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p) {
  return gpu::find_kernel(conv_kernels(), kernel_id == "cuda.auto" ? auto_choice(p) : kernel_id, "CUDA");
}

const gpu::Int8ConvKernel& int8_conv_kernel(std::string_view kernel_id) {
  return gpu::find_kernel(int8_conv_kernels(), kernel_id, "CUDA");
}

bool one_by_one(const ConvProblem& p) {
  return p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && !p.has_padding() && p.groups == 1;
}

SplitK split_k(const gpu::ConvShape& p) {
  const long long tiles = static_cast<long long>(blocks(output_pixels(p), kGemmBN)) * blocks(p.k, kGemmBM);
  const int steps = ceil_div(p.c * p.r * p.s, kGemmBK);
  const int wanted = static_cast<int>(std::clamp<long long>((kSplitKTargetBlocks + tiles - 1) / tiles, 1, std::max(1, steps / 2)));
  SplitK s{.steps_per_split = ceil_div(steps, wanted)};
  s.splits = ceil_div(steps, s.steps_per_split);  // no split left empty
  return s;
}

}  // namespace convlab::cuda
