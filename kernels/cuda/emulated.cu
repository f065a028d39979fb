// The CUDA kernels compiled as plain C++ and run by the CPU emulator (kernels/simt/). Every kernel
// file of cuda_kernels.inc is included here (through the list the build generates from it), so
// this is also the one host compile of each kernel's row: conv_kernels() is defined here, in every
// build. One translation unit holds every kernel source, so `__global__` can give them internal
// linkage and they never collide with the host stubs nvcc makes for the same names when a CUDA
// build links both into one binary. The tensor-core kernels run on a model of WMMA's results
// (simt/wmma.hpp), the int8 ones on a model of mma.sync's fragments (simt/mma.cpp).
#include "kernels/simt/emulator.hpp"
#include "kernels/simt/simt.hpp"  // first, so that the definition below replaces its __global__
#undef __global__
#define __global__ static

#include "generated/cuda_kernel_sources.inc"
#include "kernels/cuda/ops.cu"
#include "kernels/cuda/ops_int8.cu"
#include "kernels/cuda/launching_runtime.hpp"

namespace convlab::cuda {

namespace {

const gpu::ConvKernel kRows[] = {
#define CONVLAB_CUDA_KERNEL(symbol, id, summary, deterministic, error_scale) \
  {id, &symbol::unsupported, &symbol::weights, &symbol::workspace_floats, symbol::fuses_pool},
#define CONVLAB_CUDA_AUTO(symbol, id, summary, deterministic, error_scale)
#include "kernels/cuda/cuda_kernels.inc"
#undef CONVLAB_CUDA_AUTO
#undef CONVLAB_CUDA_KERNEL
};

const gpu::Int8ConvKernel kInt8Rows[] = {
#define CONVLAB_CUDA_INT8_KERNEL(symbol, id, summary, deterministic) {id, &symbol::unsupported, &symbol::weights},
#include "kernels/cuda/cuda_int8_kernels.inc"
#undef CONVLAB_CUDA_INT8_KERNEL
};

struct EmulatedLaunch {
  template <class... P, class... A>
  void operator()(const LaunchShape& s, void (*kernel)(P...), A&&... args) {
    const simt::LaunchConfig config{dim3(s.grid[0], s.grid[1], s.grid[2]), dim3(s.block[0], s.block[1], s.block[2]),
                                    s.shared_bytes};
    simt::launch(config, kernel, std::forward<A>(args)...);
  }
};

class EmulatedRuntime final : public LaunchingRuntime<gpu::HostMemoryRuntime<gpu::GpuRuntime>, EmulatedLaunch> {
 public:
  std::string_view name() const override { return "cuda-emulated"; }
};

}  // namespace

std::span<const gpu::ConvKernel> conv_kernels() { return kRows; }
std::span<const gpu::Int8ConvKernel> int8_conv_kernels() { return kInt8Rows; }

std::unique_ptr<gpu::GpuRuntime> make_emulated_runtime() { return std::make_unique<EmulatedRuntime>(); }

}  // namespace convlab::cuda
