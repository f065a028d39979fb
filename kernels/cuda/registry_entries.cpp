// The CUDA kernels' registry entries (kernels/cuda/cuda_kernels.inc): each answers from its row
// (kernels/cuda/dispatch.hpp) and plans a GpuConv on the process's CUDA runtime. run() takes
// device pointers, as the kernel contract says. Built in every build, so that the kernels are
// listed and their support rules known everywhere; without CUDA, plan explains that the build
// has none.
#include "kernels/common/error.hpp"
#include "kernels/cuda/dispatch.hpp"
#include "kernels/gpu/gpu_conv.hpp"
#ifdef CONVLAB_WITH_CUDA
#include "kernels/cuda/cuda_runtime.hpp"
#endif

namespace convlab::cuda {

namespace {

gpu::GpuRuntime& runtime() {
#ifdef CONVLAB_WITH_CUDA
  return cuda_runtime();
#else
  throw InputError("backend cuda: no CUDA device: built without CUDA (CONVLAB_CUDA=OFF or nvcc not found)");
#endif
}

}  // namespace

#define CONVLAB_CUDA_KERNEL(symbol, id, summary, deterministic, error_scale)                             \
  std::string symbol##_unsupported(const ConvProblem& p) { return gpu::unsupported(conv_kernel(id, p), p); } \
  std::unique_ptr<PlannedConv> symbol##_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {       \
    return std::make_unique<gpu::PlannedGpuConv>(runtime(), id, p, w, e);                                    \
  }
#define CONVLAB_CUDA_AUTO CONVLAB_CUDA_KERNEL
#include "kernels/cuda/cuda_kernels.inc"
#undef CONVLAB_CUDA_AUTO
#undef CONVLAB_CUDA_KERNEL

#define CONVLAB_CUDA_INT8_KERNEL(symbol, id, summary, deterministic)                                       \
  std::string symbol##_unsupported(const ConvProblem& p) { return gpu::unsupported(int8_conv_kernel(id), p); } \
  std::unique_ptr<PlannedInt8Conv> symbol##_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {   \
    return std::make_unique<gpu::PlannedGpuInt8Conv>(runtime(), id, p, w, e);                                   \
  }
#include "kernels/cuda/cuda_int8_kernels.inc"
#undef CONVLAB_CUDA_INT8_KERNEL

}  // namespace convlab::cuda
