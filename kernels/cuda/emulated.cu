// The CUDA kernels compiled as plain C++ and run by the CPU emulator (kernels/simt/): one
// translation unit holds every kernel source, so `__global__` can give them internal linkage and
// they never collide with the host stubs nvcc makes for the same names when a CUDA build links
// both into one binary. The tensor-core kernel runs on a model of WMMA's results (simt/wmma.hpp).
#include "kernels/simt/emulator.hpp"
#include "kernels/simt/simt.hpp"  // first, so that the definition below replaces its __global__
#undef __global__
#define __global__ static

#include "kernels/cuda/cuda.00_naive.cu"
#include "kernels/cuda/cuda.01_smem_tiled.cu"
#include "kernels/cuda/cuda.02_implicit_gemm.cu"
#include "kernels/cuda/cuda.03_tensorcore_tf32.cu"
#include "kernels/cuda/cuda.04_depthwise.cu"
#include "kernels/cuda/cuda.05_pointwise.cu"
#include "kernels/cuda/cuda.06_implicit_gemm_splitk.cu"
#include "kernels/cuda/cuda.07_tensorcore_tf32_pipelined.cu"
#include "kernels/cuda/ops.cu"
#include "kernels/cuda/gpu_runtime.hpp"

namespace convlab::cuda {

namespace {

struct EmulatedLaunch {
  template <class... P, class... A>
  void operator()(const LaunchShape& s, void (*kernel)(P...), A&&... args) {
    const simt::LaunchConfig config{dim3(s.grid[0], s.grid[1], s.grid[2]), dim3(s.block[0], s.block[1], s.block[2]),
                                    s.shared_bytes};
    simt::launch(config, kernel, std::forward<A>(args)...);
  }
};

class EmulatedRuntime final : public LaunchingRuntime<HostMemoryRuntime<GpuRuntime>, EmulatedLaunch> {
 public:
  std::string_view name() const override { return "cuda-emulated"; }
};

}  // namespace

std::unique_ptr<GpuRuntime> make_emulated_runtime() { return std::make_unique<EmulatedRuntime>(); }

}  // namespace convlab::cuda
