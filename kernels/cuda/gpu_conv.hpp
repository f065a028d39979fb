// One convolution planned on a GpuRuntime: the variant chosen, its weights prepared and uploaded
// once (kernels/cuda/dispatch.hpp), then run on device pointers as often as asked. Used by the
// GPU network executor (models/gpu_network.hpp) and by the CUDA kernels' registry entries.
#pragma once

#include "kernels/common/kernel.hpp"
#include "kernels/cuda/gpu_runtime.hpp"

namespace convlab::cuda {

class GpuConv {
 public:
  // Throws InputError when `variant` does not support p or the weights do not match it.
  GpuConv(GpuRuntime& rt, Variant variant, const ConvProblem& p, const ConvWeights& weights, Epilogue epilogue);

  // out = act(conv(in) + bias + residual); residual (the output's shape) may be null.
  void run(const float* in, float* out, const float* residual = nullptr) const;

  Variant variant() const { return variant_; }
  std::size_t weight_bytes() const { return weight_.bytes() + bias_.bytes(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }  // its own, allocated here

 private:
  GpuRuntime* rt_;
  Variant variant_;
  ConvShape shape_;
  int activation_;
  DeviceBuffer weight_, bias_, workspace_;
};

}  // namespace convlab::cuda
