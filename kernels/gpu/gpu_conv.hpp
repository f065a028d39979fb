// One convolution planned on a GpuRuntime: the kernel's row chosen, its weights prepared (the
// row's layout) and uploaded once, then run on device pointers as often as asked. Used by the
// GPU network executor (models/gpu_network.hpp) and by the CUDA and Metal registry entries.
#pragma once

#include "kernels/common/int8_kernel.hpp"
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

// One int8 convolution planned on a GpuRuntime, as GpuConv for FP32: the row's weight layout, the
// compensation of Int8ConvArgs and the requantisation's per-channel constants made and uploaded
// once; run takes device pointers to quint8 tensors.
class GpuInt8Conv {
 public:
  // Throws InputError when kernel_id is not one of the runtime's int8 kernels or does not support
  // p, or when the weights do not match p (check_int8_weights).
  GpuInt8Conv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const Int8ConvWeights& weights,
              Epilogue epilogue);

  void run(const std::uint8_t* in, std::uint8_t* out) const;

  std::size_t weight_bytes() const { return weight_.bytes() + compensation_.bytes() + multiplier_.bytes() + offset_.bytes(); }

 private:
  GpuRuntime* rt_;
  const Int8ConvKernel* kernel_;
  ConvShape shape_;
  int in_zero_point_, out_zero_point_, lo_, hi_;
  DeviceBuffer weight_, compensation_, multiplier_, offset_;
};

// A GpuInt8Conv as an int8 registry kernel's plan (the CUDA entries): device pointers in and out.
class PlannedGpuInt8Conv final : public PlannedInt8Conv {
 public:
  PlannedGpuInt8Conv(GpuRuntime& rt, std::string_view id, const ConvProblem& p, const Int8ConvWeights& w, Epilogue e)
      : conv_(rt, id, p, w, e) {}
  std::size_t weight_bytes() const override { return conv_.weight_bytes(); }
  void run(const std::uint8_t* input, std::uint8_t* output, void* /*workspace*/) const override { conv_.run(input, output); }

 private:
  GpuInt8Conv conv_;
};

}  // namespace convlab::gpu
