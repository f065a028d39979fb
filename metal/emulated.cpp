// The Metal runtime on the CPU emulator: the .metal kernels, compiled as C++ by clang
// (kernels/simt/msl.hpp, msl_to_cpp.cmake), run one threadgroup at a time on the calling thread;
// "device memory" is host memory, as on Apple's unified memory. Only for checking: nothing
// here is timed against a GPU.
#include <array>

#include <fmt/format.h>

#include "kernels/simt/emulator.hpp"
#include "metal/dispatch.hpp"

extern "C" {
#define CONVLAB_METAL_KERNEL(symbol, ...) void convlab_msl_conv_##symbol(void* const* buffers);
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
#define CONVLAB_METAL_FUNCTION(name) void convlab_msl_##name(void* const* buffers);
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
}

namespace convlab::metal {

namespace {

using Entry = void (*)(void* const*);
constexpr Entry kEntries[] = {  // in the order of Function
#define CONVLAB_METAL_KERNEL(symbol, ...) &convlab_msl_conv_##symbol,
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
#define CONVLAB_METAL_FUNCTION(name) &convlab_msl_##name,
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
};

class EmulatedRuntime final : public gpu::HostMemoryRuntime<MetalRuntime> {
 public:
  std::string_view name() const override { return "metal-emulated"; }

 private:
  void encode(const Dispatch& d, std::span<const Binding> bindings) override {
    std::array<void*, 8> buffers{};
    if (bindings.size() > buffers.size())
      throw simt::EmulatorError(fmt::format("metal: {} takes {} buffers, over {}", to_string(d.function),
                                            bindings.size(), buffers.size()));
    for (std::size_t i = 0; i < bindings.size(); ++i) buffers[i] = const_cast<void*>(bindings[i].data);
    const simt::LaunchConfig config{dim3(d.groups[0], d.groups[1], d.groups[2]),
                                    dim3(d.threads[0], d.threads[1], d.threads[2])};
    simt::launch(config, kEntries[static_cast<int>(d.function)], static_cast<void* const*>(buffers.data()));
  }
};

}  // namespace

std::unique_ptr<gpu::GpuRuntime> make_emulated_runtime() { return std::make_unique<EmulatedRuntime>(); }

}  // namespace convlab::metal
