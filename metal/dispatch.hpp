// The Metal kernels as rows (kernels/gpu/conv_kernel.hpp), metal.auto's rule, and how each is
// dispatched: its MSL function (conv_<symbol>), its support rule and its grid, named by its line
// in metal/metal_kernels.inc from the rules and grids below. MetalRuntime implements the GPU
// runtime interface (kernels/gpu/runtime.hpp, which the network executor and the GPU lab use for
// CUDA too) once, on top of encode(), which the Mac host (metal/metal_runtime.mm) and the CPU
// emulator (metal/emulated.cpp) each provide.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kernels/common/kernel.hpp"
#include "kernels/gpu/runtime.hpp"
#include "metal/metal_params.h"

namespace convlab::metal {

// The sizes the .metal files #define (metal.01 and metal.03: TILE, OUT_CHANNELS,
// PATCH_CAPACITY, TAPS_CAPACITY; metal.02: TILE).
constexpr int kTile = 16, kTiledOutChannels = 8, kPatchCapacity = 1600, kTapsCapacity = 25, kMatrixTile = 32;

// Every MSL function the host makes a pipeline for: a conv_<symbol> per kernel of the list, then
// the ops of metal/functions.inc.
enum class Function {
#define CONVLAB_METAL_KERNEL(symbol, ...) conv_##symbol,
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
#define CONVLAB_METAL_FUNCTION(name) name,
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
};
inline constexpr Function kFunctions[] = {
#define CONVLAB_METAL_KERNEL(symbol, ...) Function::conv_##symbol,
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
#define CONVLAB_METAL_FUNCTION(name) Function::name,
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
};
std::string_view to_string(Function f);

struct Dispatch {
  Function function;
  unsigned groups[3] = {1, 1, 1};   // threadgroups per grid
  unsigned threads[3] = {1, 1, 1};  // threads per threadgroup
};

// One row per kernel line of metal_kernels.inc, in its order (metal.auto aside).
std::span<const gpu::ConvKernel> conv_kernels();
// The row `kernel_id` runs on p: its own, or metal.auto's choice. Throws InputError for an id
// that is not a Metal kernel.
const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p);

// The support rules a line of metal_kernels.inc can name (empty when supported, else why not).
std::string any_problem(const ConvProblem& p);
std::string ungrouped_only(const ConvProblem& p);
std::string patch_fits(const ConvProblem& p);  // metal.01 and metal.03 stage it in fixed arrays
std::string depthwise_patch_fits(const ConvProblem& p);
// The grids a line can name: how many threadgroups of how many threads run `f` on p.
Dispatch thread_per_output(Function f, const gpu::ConvShape& p);
Dispatch tile_per_channel_block(Function f, const gpu::ConvShape& p);  // 16x16 outputs x 8 channels
Dispatch simdgroup_matrix_tiles(Function f, const gpu::ConvShape& p);  // 32x32 of the GEMM, 4 SIMD-groups
Dispatch tile_per_plane(Function f, const gpu::ConvShape& p);          // 16x16 outputs of one plane

// One [[buffer(n)]] argument: a device buffer (bytes == 0; data is null where the kernel's flags
// say it is unused), or a small parameter block copied into the command (setBytes).
struct Binding {
  const void* data;
  std::size_t bytes = 0;
};

class MetalRuntime : public gpu::GpuRuntime {
 public:
  const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p) const override;
  void conv(const gpu::ConvKernel& kernel, const gpu::ConvArgs& a, float* workspace) override;
  void pool(const gpu::PoolArgs& a, bool average) override;
  void global_avg_pool(const float* in, int planes, int plane_size, float* out) override;
  void linear(const float* in, int batch, int in_features, const float* weight, const float* bias, int out_features,
              float* out, bool relu) override;
  void add(const float* a, const float* b, float* out, long long count, bool relu) override;
  void softmax(const float* in, int batch, int classes, float* out) override;

 protected:
  // Appends one dispatch to the work in flight, its bindings in [[buffer(n)]] order. The data
  // of a parameter block is only valid during the call.
  virtual void encode(const Dispatch& d, std::span<const Binding> bindings) = 0;
};

// The .metal kernels compiled as C++ and run by the CPU emulator: built where clang is found
// (CONVLAB_WITH_METAL_EMULATOR), for the tests.
std::unique_ptr<gpu::GpuRuntime> make_emulated_runtime();

}  // namespace convlab::metal
