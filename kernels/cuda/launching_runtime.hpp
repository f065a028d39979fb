// The launches of a CUDA runtime, written once for both: Base is GpuRuntime or a subclass of it,
// Launch the callable that starts one kernel (the stream launch of kernels/cuda/cuda_runtime.cu,
// the emulator's in kernels/cuda/emulated.cu). Included after every kernel source, so that each
// row's launch is instantiated here with the runtime's own Launch.
#pragma once

#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/gpu/runtime.hpp"

namespace convlab::cuda {

template <class Base, class Launch>
class LaunchingRuntime : public Base {
 public:
  const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p) const override {
    return cuda::conv_kernel(kernel_id, p);
  }
  // `kernel` is one of conv_kernels()' rows (conv_kernel returned it), so its place there is
  // its launch's place here.
  void conv(const gpu::ConvKernel& kernel, const ConvArgs& a, float* workspace) override {
    kConvLaunches[&kernel - conv_kernels().data()](launch_, a, workspace);
  }
  const gpu::Int8ConvKernel& int8_conv_kernel(std::string_view kernel_id) const override {
    return cuda::int8_conv_kernel(kernel_id);
  }
  void conv_int8(const gpu::Int8ConvKernel& kernel, const Int8ConvArgs& a) override {
    kInt8ConvLaunches[&kernel - int8_conv_kernels().data()](launch_, a);
  }
  void quantize(const float* in, unsigned char* out, long long count, float scale, int zero_point) override {
    launch_(elementwise_launch(count), cuda::quantize_u8, in, out, count, scale, zero_point);
  }
  void dequantize(const unsigned char* in, float* out, long long count, float scale, int zero_point) override {
    launch_(elementwise_launch(count), cuda::dequantize_u8, in, out, count, scale, zero_point);
  }
  void pool_u8(const PoolArgsU8& a, bool average) override {
    launch_(elementwise_launch(static_cast<long long>(a.planes) * a.oh * a.ow), pool2d_u8, a, average ? 1 : 0);
  }
  void global_avg_pool_u8(const unsigned char* in, int planes, int plane_size, unsigned char* out) override {
    launch_(warp_launch(planes), cuda::global_avg_pool_u8, in, planes, plane_size, out);
  }
  void add_u8(const AddArgsU8& a) override { launch_(elementwise_launch(a.count), cuda::add_u8, a); }
  void pool(const PoolArgs& a, bool average) override {
    launch_(elementwise_launch(static_cast<long long>(a.planes) * a.oh * a.ow), pool2d, a, average ? 1 : 0);
  }
  void global_avg_pool(const float* in, int planes, int plane_size, float* out) override {
    launch_(warp_launch(planes), cuda::global_avg_pool, in, planes, plane_size, out);
  }
  void linear(const float* in, int batch, int in_features, const float* weight, const float* bias, int out_features,
              float* out, bool relu) override {
    launch_(warp_launch(static_cast<long long>(batch) * out_features), cuda::linear, in, batch, in_features, weight, bias,
            out_features, out, relu ? 1 : 0);
  }
  void add(const float* a, const float* b, float* out, long long count, bool relu) override {
    launch_(elementwise_launch(count), cuda::add, a, b, out, count, relu ? 1 : 0);
  }
  void softmax(const float* in, int batch, int classes, float* out) override {
    launch_(warp_launch(batch), cuda::softmax, in, batch, classes, out);
  }

 protected:
  Launch launch_;

 private:
  // In the order of conv_kernels(): the launch of each line of the list.
  using ConvLaunch = void (*)(Launch&, const ConvArgs&, float*);
  static constexpr ConvLaunch kConvLaunches[] = {
#define CONVLAB_CUDA_KERNEL(symbol, id, summary, deterministic, error_scale) &symbol::launch<Launch>,
#define CONVLAB_CUDA_AUTO(symbol, id, summary, deterministic, error_scale)
#include "kernels/cuda/cuda_kernels.inc"
#undef CONVLAB_CUDA_AUTO
#undef CONVLAB_CUDA_KERNEL
  };
  using Int8ConvLaunch = void (*)(Launch&, const Int8ConvArgs&);
  static constexpr Int8ConvLaunch kInt8ConvLaunches[] = {
#define CONVLAB_CUDA_INT8_KERNEL(symbol, id, summary, deterministic) &symbol::launch<Launch>,
#include "kernels/cuda/cuda_int8_kernels.inc"
#undef CONVLAB_CUDA_INT8_KERNEL
  };
};

}  // namespace convlab::cuda
