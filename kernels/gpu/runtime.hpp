// What running a network on "a GPU" needs: counted device memory, stream-ordered copies and
// kernel launches, and a synchronize. Every GPU backend implements it, and everything above
// shares it (the network executor in models/gpu_network.hpp, the checks, the benchmarks):
//   CUDA   cuda::cuda_runtime() (the GPU, kernels/cuda/cuda_runtime.cu, built with CUDA) and
//          cuda::make_emulated_runtime() (the same kernel sources on the CPU emulator, always built);
//   Metal  metal::metal_runtime() (metal/metal_runtime.mm, macOS) and
//          metal::make_emulated_runtime() (the .metal kernels on the CPU emulator, where clang is).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kernels/gpu/conv_kernel.hpp"

namespace convlab::gpu {

class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;
  virtual std::string_view name() const = 0;

  // Device memory, counted here for every runtime. allocate throws std::bad_alloc when the device
  // is full; release ignores pointers it did not hand out. Never called inside a timed loop:
  // plans allocate everything up front.
  float* allocate(std::size_t floats) {
    const std::size_t bytes = floats * sizeof(float);
    float* p = device_allocate(bytes);
    try {
      sizes_.emplace(p, bytes);
    } catch (...) {
      device_free(p);
      throw;
    }
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    return p;
  }
  void release(float* device) noexcept {
    const auto it = sizes_.find(device);
    if (it == sizes_.end()) return;
    in_use_ -= it->second;
    sizes_.erase(it);
    device_free(device);
  }
  std::size_t bytes_in_use() const { return in_use_; }
  std::size_t peak_bytes() const { return peak_; }  // since the last reset_peak()
  void reset_peak() { peak_ = in_use_; }

  // Stream-ordered: a download's host buffer is complete after synchronize().
  virtual void upload(float* device, const float* host, std::size_t floats) = 0;
  virtual void download(float* host, const float* device, std::size_t floats) = 0;
  virtual void synchronize() = 0;

  // A device-side clock around one run, where the backend has one (CUDA events; Metal's command
  // buffer GPUStartTime/GPUEndTime): record_start right before the run, record_stop right after,
  // elapsed_ms once synchronize() has returned.
  virtual bool has_device_timer() const { return false; }
  virtual void record_start() {}
  virtual void record_stop() {}
  virtual double elapsed_ms() { return 0.0; }
  // Device memory in use now, by every process where the backend only knows that much
  // (cudaMemGetInfo; Metal: the device's currentAllocatedSize). Nothing when unknown.
  virtual std::optional<std::size_t> device_bytes_in_use() { return std::nullopt; }

  // The convolution kernel `kernel_id` runs on p, as a row of the backend's list: its own, or the
  // one an auto kernel's rule picks. Throws InputError for an id that is not one of the backend's.
  virtual const ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p) const = 0;

  // Int8 convolutions (kernels/gpu/conv_args.hpp), on the backends that have int8 kernels (CUDA).
  // The others keep these defaults, which say that they have none.
  virtual const Int8ConvKernel& int8_conv_kernel(std::string_view kernel_id) const;
  virtual void conv_int8(const Int8ConvKernel& kernel, const Int8ConvArgs& a);
  // And the other operators of an int8 network (models/gpu_int8_network.hpp), with the arithmetic
  // of kernels/cpu/ops.hpp's u8 twins, so the bytes match the CPU's: QuantStub, DeQuantStub, pools
  // that keep their input's quantisation, the residual add with its own.
  virtual void quantize(const float* in, unsigned char* out, long long count, float scale, int zero_point);
  virtual void dequantize(const unsigned char* in, float* out, long long count, float scale, int zero_point);
  virtual void pool_u8(const PoolArgsU8& a, bool average);
  virtual void global_avg_pool_u8(const unsigned char* in, int planes, int plane_size, unsigned char* out);
  virtual void add_u8(const AddArgsU8& a);

  // Bytes to and from device memory allocated in floats (allocate((bytes + 3) / 4)): through a
  // host copy padded to whole floats. Not for timed loops: they wait for the copy to finish.
  void upload_bytes(void* device, const void* host, std::size_t bytes);
  void download_bytes(void* host, const void* device, std::size_t bytes);

  // Stream-ordered kernel launches. `kernel`: a row conv_kernel returned; workspace:
  // kernel.workspace_floats(a.p) floats of device memory (null when that is 0).
  virtual void conv(const ConvKernel& kernel, const ConvArgs& a, float* workspace) = 0;
  virtual void pool(const PoolArgs& a, bool average) = 0;
  virtual void global_avg_pool(const float* in, int planes, int plane_size, float* out) = 0;
  virtual void linear(const float* in, int batch, int in_features, const float* weight, const float* bias,
                      int out_features, float* out, bool relu) = 0;
  virtual void add(const float* a, const float* b, float* out, long long count, bool relu) = 0;
  virtual void softmax(const float* in, int batch, int classes, float* out) = 0;

 protected:
  virtual float* device_allocate(std::size_t bytes) = 0;  // throws std::bad_alloc when full
  virtual void device_free(float* device) noexcept = 0;

 private:
  std::unordered_map<float*, std::size_t> sizes_;  // what each live allocation counted
  std::size_t in_use_ = 0, peak_ = 0;
};

// Device memory owned by a runtime, released when the buffer goes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuRuntime& rt, std::size_t floats) : rt_(&rt), data_(floats ? rt.allocate(floats) : nullptr), size_(floats) {}
  // At least `bytes` bytes (int8 tensors), in whole floats.
  static DeviceBuffer of_bytes(GpuRuntime& rt, std::size_t bytes) { return DeviceBuffer(rt, (bytes + 3) / 4); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : rt_(o.rt_), data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = o.rt_, data_ = o.data_, size_ = o.size_;
      o.data_ = nullptr;
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }
  float* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(float); }

 private:
  void reset() {
    if (data_ != nullptr) rt_->release(data_);
    data_ = nullptr;
  }
  GpuRuntime* rt_ = nullptr;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

// The memory half of a runtime whose "device memory" is host memory: the CPU emulators of CUDA
// and Metal kernels, which run each launch to completion on the calling thread, so copies are
// memcpy and there is nothing to wait for.
template <class Base>
class HostMemoryRuntime : public Base {
 public:
  void upload(float* device, const float* host, std::size_t floats) override {
    std::memcpy(device, host, floats * sizeof(float));
  }
  void download(float* host, const float* device, std::size_t floats) override {
    std::memcpy(host, device, floats * sizeof(float));
  }
  void synchronize() override {}

 private:
  float* device_allocate(std::size_t bytes) override {
    return static_cast<float*>(::operator new(bytes, std::align_val_t{256}));
  }
  void device_free(float* p) noexcept override { ::operator delete(p, std::align_val_t{256}); }
};

}  // namespace convlab::gpu
