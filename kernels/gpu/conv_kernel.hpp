// A GPU convolution kernel as its backend lists it (CUDA: kernels/cuda/cuda_kernels.inc, Metal:
// metal/metal_kernels.inc), and the rules every GPU kernel shares. The runtimes, GpuConv and the
// registry entries read a kernel only through its row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "kernels/gpu/conv_args.hpp"

namespace convlab::gpu {

struct ConvKernel {
  std::string_view id;  // e.g. cuda.02_implicit_gemm
  // Empty when the kernel runs p, else why not. Its own limits only: use gpu::unsupported, which
  // also applies the 32-bit rule.
  std::string (*unsupported)(const ConvProblem& p);
  // The weights as plan uploads them, from PyTorch's OIHW.
  std::vector<float> (*weights)(const ConvProblem& p, std::span<const float> oihw);
  // Floats of device scratch a run needs (0 for most).
  std::size_t (*workspace_floats)(const ConvShape& p);
  // Whether the kernel can do the pooling layer after the conv in its own last pass (ConvArgs::pool).
  bool fuses_pool;
};

// An int8 GPU convolution kernel's row (CUDA: kernels/cuda/cuda_int8_kernels.inc).
struct Int8ConvKernel {
  std::string_view id;  // e.g. cuda.20_int8_dp4a
  std::string (*unsupported)(const ConvProblem& p);  // its own limits, as for ConvKernel
  // The weights as plan uploads them, from PyTorch's qint8 OIHW.
  std::vector<signed char> (*weights)(const ConvProblem& p, std::span<const std::int8_t> oihw);
};

// The row of `id` in a backend's list. Throws InputError naming the backend when it is not there.
const ConvKernel& find_kernel(std::span<const ConvKernel> rows, std::string_view id, std::string_view backend);
const Int8ConvKernel& find_kernel(std::span<const Int8ConvKernel> rows, std::string_view id, std::string_view backend);

// Empty when `kernel` runs p: p fits the 32-bit rule and the kernel's own.
std::string unsupported(const ConvKernel& kernel, const ConvProblem& p);
std::string unsupported(const Int8ConvKernel& kernel, const ConvProblem& p);
// The rule every GPU kernel shares (CUDA's and Metal's): they index in 32 bits, so a tensor of
// 2^31 elements or more is refused. Empty when p fits.
std::string exceeds_32bit_indices(const ConvProblem& p);

ConvShape to_shape(const ConvProblem& p);
int to_act(Activation a);

// Row defaults: the weights as given; no scratch.
std::vector<float> oihw_weights(const ConvProblem& p, std::span<const float> oihw);
std::size_t no_workspace(const ConvShape& p);

}  // namespace convlab::gpu
