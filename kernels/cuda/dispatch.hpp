// The CUDA kernels as rows (kernels/gpu/conv_kernel.hpp) and cuda.auto's rule. Each row is made
// from the struct beside its kernel in kernels/cuda/<id>.cu (support rule, weight layout,
// workspace, launch); the list itself is kernels/cuda/cuda_kernels.inc. Plain C++: the registry,
// the runtimes and the tests include it.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "kernels/common/problem.hpp"
#include "kernels/gpu/conv_kernel.hpp"
#include "kernels/gpu/runtime.hpp"

namespace convlab::cuda {

// One row per line of cuda_kernels.inc, in its order (cuda.auto aside): defined in
// kernels/cuda/emulated.cu, the one host compile of every kernel file.
std::span<const gpu::ConvKernel> conv_kernels();
// The row `kernel_id` runs on p: its own, or cuda.auto's choice. Throws InputError for an id
// that is not a CUDA kernel.
const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p);

// The int8 rows, one per line of cuda_int8_kernels.inc, in its order (also in emulated.cu), and
// the row of `kernel_id` (InputError when it is not a CUDA int8 kernel).
std::span<const gpu::Int8ConvKernel> int8_conv_kernels();
const gpu::Int8ConvKernel& int8_conv_kernel(std::string_view kernel_id);

// Kernels run one block at a time on the calling thread; "device memory" is host memory. Always
// built: this is how the tests check the CUDA kernels without a GPU (kernels/cuda/emulated.cu).
std::unique_ptr<gpu::GpuRuntime> make_emulated_runtime();

// 1x1, stride 1, no padding, groups 1: cuda.05's problems, and a branch of cuda.auto's rule.
bool one_by_one(const ConvProblem& p);

// cuda.06's split of the reduction: `splits` blocks along grid z, `steps_per_split` steps of
// kGemmBK taps each. Depends on the problem alone, so results do not depend on the device;
// cuda.auto splits exactly when this does.
struct SplitK {
  int splits = 1, steps_per_split = 1;
};
SplitK split_k(const gpu::ConvShape& p);

}  // namespace convlab::cuda
