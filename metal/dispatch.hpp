// The one place that knows, for each Metal kernel: which problems it supports and how it is
// dispatched (threadgroups, their size, its buffers in [[buffer(n)]] order). MetalRuntime
// implements the GPU runtime interface (kernels/cuda/gpu_runtime.hpp, which the network executor
// and the GPU lab use for CUDA too) once, on top of encode(), which the Mac host
// (metal/metal_runtime.mm) and the CPU emulator (metal/emulated.cpp) each provide.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kernels/common/kernel.hpp"
#include "kernels/cuda/gpu_runtime.hpp"
#include "metal/metal_params.h"

namespace convlab::metal {

enum class Variant { naive, threadgroup_tiled, simdgroup_matrix, depthwise };
std::string_view to_string(Variant v);
// The variant a kernel id runs on p; metal.auto chooses by rule. Throws InputError for an id
// that is not a Metal kernel.
Variant variant_for(std::string_view kernel_id, const ConvProblem& p);
// Empty when `v` supports p, else why not.
std::string unsupported(Variant v, const ConvProblem& p);

// The sizes the .metal files #define (metal.01 and metal.03: TILE, OUT_CHANNELS,
// PATCH_CAPACITY, TAPS_CAPACITY; metal.02: TILE).
constexpr int kTile = 16, kTiledOutChannels = 8, kPatchCapacity = 1600, kTapsCapacity = 25, kMatrixTile = 32;

enum class Function {
#define CONVLAB_METAL_FUNCTION(name) name,
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
};
std::string_view to_string(Function f);

struct Dispatch {
  Function function;
  unsigned groups[3] = {1, 1, 1};   // threadgroups per grid
  unsigned threads[3] = {1, 1, 1};  // threads per threadgroup
};

// One [[buffer(n)]] argument: a device buffer (bytes == 0; data is null where the kernel's flags
// say it is unused), or a small parameter block copied into the command (setBytes).
struct Binding {
  const void* data;
  std::size_t bytes = 0;
};

class MetalRuntime : public cuda::GpuRuntime {
 public:
  int conv_variant(std::string_view kernel_id, const ConvProblem& p) const override;
  std::string conv_unsupported(int variant, const ConvProblem& p) const override;
  std::string conv_name(int variant) const override;
  std::vector<float> conv_weights(int variant, const ConvProblem& p, std::span<const float> oihw) const override;
  std::size_t conv_workspace_floats(int variant, const cuda::ConvShape& p) const override;

  void conv(int variant, const cuda::ConvArgs& a, float* workspace) override;
  void pool(const cuda::PoolArgs& a, bool average) override;
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
std::unique_ptr<cuda::GpuRuntime> make_emulated_runtime();

}  // namespace convlab::metal
