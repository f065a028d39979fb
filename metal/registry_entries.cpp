// The Metal kernels' registry entries (metal/metal_kernels.inc): each answers from its row
// (metal/dispatch.hpp) and plans a GpuConv on the process's Metal runtime (macOS only;
// metal/metal_runtime.mm). Built on every system so that the kernels are listed with their
// support rules; elsewhere plan says the backend needs macOS (the tests run the same kernels on
// the emulator through metal::make_emulated_runtime()).
#include "kernels/common/error.hpp"
#include "kernels/gpu/gpu_conv.hpp"
#include "metal/dispatch.hpp"
#ifdef CONVLAB_WITH_METAL
#include "metal/metal_runtime.hpp"
#endif

namespace convlab::metal {

namespace {

gpu::GpuRuntime& runtime() {
#ifdef CONVLAB_WITH_METAL
  return metal_runtime();
#else
  throw InputError("backend metal: needs macOS (here the Metal kernels run only in the tests, on the CPU emulator)");
#endif
}

}  // namespace

#define CONVLAB_METAL_KERNEL(symbol, id, summary, deterministic, error_scale, ...)                       \
  std::string symbol##_unsupported(const ConvProblem& p) { return gpu::unsupported(conv_kernel(id, p), p); } \
  std::unique_ptr<PlannedConv> symbol##_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {       \
    return std::make_unique<gpu::PlannedGpuConv>(runtime(), id, p, w, e);                                    \
  }
#define CONVLAB_METAL_AUTO CONVLAB_METAL_KERNEL
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL

}  // namespace convlab::metal
