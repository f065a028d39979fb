// One convolution planned on a GpuRuntime: the kernel's row chosen, its weights prepared (the
// row's layout) and uploaded once, then run on device pointers as often as asked. Used by the
// GPU network executor (models/gpu_network.hpp) and by the CUDA and Metal registry entries.
#pragma once

#include "kernels/common/kernel.hpp"
#include "kernels/gpu/runtime.hpp"

namespace convlab::gpu {

class GpuConv {
 public:
  // kernel_id: one of the runtime's conv kernels (cuda.02_implicit_gemm, metal.auto, ...). Throws
  // InputError when it is not one, does not support p, or the weights do not match p, or when
  // `pool` asks for a fused pooling the kernel cannot do (its row's fuses_pool).
  GpuConv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const ConvWeights& weights,
          Epilogue epilogue, FusedPool pool = {});

  // out = act(conv(in) + bias + residual), pooled when the plan fused a pool (out then has the
  // pooled shape); residual (the conv output's shape) may be null.
  void run(const float* in, float* out, const float* residual = nullptr) const;

  std::string_view kernel_id() const { return kernel_->id; }  // the kernel that runs (auto's choice)
  std::size_t weight_bytes() const { return weight_.bytes() + bias_.bytes(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }  // its own, allocated here

 private:
  GpuRuntime* rt_;
  const ConvKernel* kernel_;
  ConvShape shape_;
  int activation_;
  FusedPool pool_;
  DeviceBuffer weight_, bias_, workspace_;
};

// A GpuConv as a registry kernel's plan (the CUDA and Metal entries): run() takes device
// pointers, as the kernel contract says for GPU kernels.
class PlannedGpuConv final : public PlannedConv {
 public:
  PlannedGpuConv(GpuRuntime& rt, std::string_view id, const ConvProblem& p, const ConvWeights& w, Epilogue e)
      : conv_(rt, id, p, w, e) {}
  std::size_t weight_bytes() const override { return conv_.weight_bytes(); }
  void run(const float* input, float* output, void* /*workspace*/) const override { conv_.run(input, output); }
  std::string explain() const override { return "ran " + std::string(conv_.kernel_id()); }

 private:
  GpuConv conv_;
};

}  // namespace convlab::gpu
