// One convolution planned on a GpuRuntime: the variant chosen, its weights prepared and uploaded
// once (the runtime's conv_weights), then run on device pointers as often as asked. Used by the
// GPU network executor (models/gpu_network.hpp) and by the CUDA and Metal registry entries.
#pragma once

#include "kernels/common/kernel.hpp"
#include "kernels/cuda/gpu_runtime.hpp"

namespace convlab::cuda {

class GpuConv {
 public:
  // kernel_id: one of the runtime's conv kernels (cuda.02_implicit_gemm, metal.auto, ...). Throws
  // InputError when it is not one, does not support p, or the weights do not match p, or when
  // `pool` asks for a fused pooling the variant cannot do (runtime's conv_fuses_pool).
  GpuConv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const ConvWeights& weights,
          Epilogue epilogue, FusedPool pool = {});

  // out = act(conv(in) + bias + residual), pooled when the plan fused a pool (out then has the
  // pooled shape); residual (the conv output's shape) may be null.
  void run(const float* in, float* out, const float* residual = nullptr) const;

  std::string variant() const { return rt_->conv_name(variant_); }  // the kernel that runs
  std::size_t weight_bytes() const { return weight_.bytes() + bias_.bytes(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }  // its own, allocated here

 private:
  GpuRuntime* rt_;
  int variant_;
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
  std::string explain() const override { return "ran " + conv_.variant(); }

 private:
  GpuConv conv_;
};

}  // namespace convlab::cuda
