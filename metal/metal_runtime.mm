// Host code of the Metal backend: the only place in convlab that talks to Metal. Everything is
// made up front: the device, one command queue, the metallib built with the project and a compute
// pipeline per function of metal/dispatch.hpp's kFunctions (the conv kernels, then the ops).
// Dispatches are recorded into one command buffer and run when synchronize() commits it. Memory
// is shared (unified on Apple silicon): a buffer's CPU address is the "device pointer" convlab
// passes around, and a transfer is a CPU copy.
#include "metal/metal_runtime.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

// Apple's headers last: their macros (YES, NO, MIN, MAX, ...) need not reach convlab's headers.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#if !__has_feature(objc_arc)
#error "metal_runtime.mm needs ARC (-fobjc-arc, set in metal/CMakeLists.txt)"
#endif
#ifndef CONVLAB_METALLIB_PATH
#error "CONVLAB_METALLIB_PATH (the metallib metal/CMakeLists.txt builds) is not defined"
#endif

namespace convlab::metal {

namespace {

constexpr std::size_t kMaxBindings = 8;       // the kernels take at most 6 [[buffer(n)]] arguments
constexpr std::size_t kMaxBlockBytes = 4096;  // setBytes:length:atIndex: is for at most 4 KB

std::string utf8(NSString* s) {
  const char* c = s != nil ? s.UTF8String : nullptr;
  return c != nullptr ? c : "";
}
std::string describe(NSError* e) { return e != nil ? utf8(e.localizedDescription) : "no reason given"; }

// MTLCreateSystemDefaultDevice returns nil in a command-line tool not linked with CoreGraphics
// (Apple's documentation of it); the first device listed is then the same GPU.
id<MTLDevice> default_device() {
  id<MTLDevice> device = MTLCreateSystemDefaultDevice();
  if (device == nil) device = MTLCopyAllDevices().firstObject;
  return device;
}
const char* const kNoDevice = "no Metal device (MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none)";

// The kernels, compiled at build time by xcrun metal -fno-fast-math and xcrun metallib.
id<MTLLibrary> load_library(id<MTLDevice> device, std::string& error) {
  NSError* e = nil;
  id<MTLLibrary> library = [device newLibraryWithURL:[NSURL fileURLWithPath:@(CONVLAB_METALLIB_PATH)] error:&e];
  if (library == nil) error = fmt::format("cannot load {}: {}", CONVLAB_METALLIB_PATH, describe(e));
  return library;
}

// The newest family the device supports, of those convlab reports. Apple8 and Apple9 need the
// macOS 13 and 14 SDKs to be named and those systems to be asked.
std::string gpu_family(id<MTLDevice> device) {
#ifdef __MAC_14_0
  if (@available(macOS 14.0, *)) {
    if ([device supportsFamily:MTLGPUFamilyApple9]) return "Apple9";
  }
#endif
#ifdef __MAC_13_0
  if (@available(macOS 13.0, *)) {
    if ([device supportsFamily:MTLGPUFamilyApple8]) return "Apple8";
  }
#endif
  if ([device supportsFamily:MTLGPUFamilyApple7]) return "Apple7";
  if ([device supportsFamily:MTLGPUFamilyMac2]) return "Mac2";
  return "older than Apple7 and Mac2";
}

// Objective-C calls that create objects run inside @autoreleasepool (a command-line tool has no
// pool of its own); nothing throws inside one, because a pool left by an exception is not drained.
class Runtime final : public MetalRuntime {
 public:
  Runtime() {
    const std::string error = make_objects();
    if (!error.empty()) throw InputError("backend metal: " + error);
  }
  ~Runtime() override {  // the process is ending: work never synchronized is dropped
    @autoreleasepool {
      if (encoder_ != nil) [encoder_ endEncoding];  // Metal asserts when an open encoder is released
    }
  }

  std::string_view name() const override { return "metal"; }

  // Shared memory: a "transfer" is a CPU copy. The work encoded before it runs first, as a
  // stream-ordered copy would wait for it (it may read or write this memory).
  void upload(float* device, const float* host, std::size_t floats) override {
    synchronize();
    std::memcpy(device, host, floats * sizeof(float));
  }
  void download(float* host, const float* device, std::size_t floats) override {
    synchronize();
    std::memcpy(host, device, floats * sizeof(float));
  }

  void synchronize() override {
    std::string failure;
    if (command_buffer_ != nil) {
      @autoreleasepool {
        [encoder_ endEncoding];
        [command_buffer_ commit];
        [command_buffer_ waitUntilCompleted];
        if (command_buffer_.status == MTLCommandBufferStatusError)
          failure = describe(command_buffer_.error);
        else if (timing_)
          elapsed_s_ += command_buffer_.GPUEndTime - command_buffer_.GPUStartTime;
        encoder_ = nil;
        command_buffer_ = nil;
      }
    }
    if (stopping_) timing_ = stopping_ = false;  // the timed run is over
    if (!failure.empty()) throw std::runtime_error("metal: command buffer failed: " + failure);
  }

  // The GPU time (GPUEndTime - GPUStartTime) of every command buffer committed from record_start
  // to the synchronize after record_stop, summed: one for a forward pass, more when the run
  // synchronizes inside (its uploads and downloads do).
  bool has_device_timer() const override { return true; }
  void record_start() override {
    synchronize();  // earlier work is not the run's
    elapsed_s_ = 0.0;
    timing_ = true;
    stopping_ = false;
  }
  void record_stop() override { stopping_ = true; }
  double elapsed_ms() override { return elapsed_s_ * 1e3; }

  // Metal's currentAllocatedSize: what the device holds for resources (Apple does not say whether
  // other processes' count).
  std::optional<std::size_t> device_bytes_in_use() override { return device_.currentAllocatedSize; }

 private:
  struct Location {
    id<MTLBuffer> buffer = nil;
    NSUInteger offset = 0;
  };

  id<MTLDevice> device_ = nil;
  id<MTLCommandQueue> queue_ = nil;
  std::vector<id<MTLComputePipelineState>> pipelines_;  // indexed by Function
  id<MTLBuffer> dummy_ = nil;                        // bound for a null pointer: the kernel's flags say unused
  std::map<std::uintptr_t, id<MTLBuffer>> buffers_;  // live allocations by contents address
  id<MTLCommandBuffer> command_buffer_ = nil;        // the work recorded since the last synchronize
  id<MTLComputeCommandEncoder> encoder_ = nil;
  bool timing_ = false, stopping_ = false;
  double elapsed_s_ = 0.0;

  // Empty, or why the backend cannot run here.
  std::string make_objects() {
    @autoreleasepool {
      device_ = default_device();
      if (device_ == nil) return kNoDevice;
      queue_ = [device_ newCommandQueue];
      dummy_ = [device_ newBufferWithLength:16 options:MTLResourceStorageModeShared];
      if (queue_ == nil || dummy_ == nil) return "cannot make a command queue on " + utf8(device_.name);
      std::string error;
      id<MTLLibrary> library = load_library(device_, error);
      if (library == nil) return error;
      for (const Function f : kFunctions) {
        const std::string function_name(to_string(f));
        id<MTLFunction> function = [library newFunctionWithName:@(function_name.c_str())];
        if (function == nil) return fmt::format("{} has no function {}", CONVLAB_METALLIB_PATH, function_name);
        NSError* e = nil;
        id<MTLComputePipelineState> pipeline = [device_ newComputePipelineStateWithFunction:function error:&e];
        if (pipeline == nil) return fmt::format("cannot make the pipeline of {}: {}", function_name, describe(e));
        pipelines_.push_back(pipeline);
      }
    }
    return {};
  }

  float* device_allocate(std::size_t bytes) override {
    if (bytes > device_.maxBufferLength) throw std::bad_alloc();
    id<MTLBuffer> buffer = nil;
    @autoreleasepool {
      buffer = [device_ newBufferWithLength:std::max<std::size_t>(bytes, 16) options:MTLResourceStorageModeShared];
    }
    if (buffer == nil) throw std::bad_alloc();
    buffers_.emplace(reinterpret_cast<std::uintptr_t>(buffer.contents), buffer);
    return static_cast<float*>(buffer.contents);
  }
  // A command buffer that still uses the buffer keeps it alive until it completes.
  void device_free(float* p) noexcept override { buffers_.erase(reinterpret_cast<std::uintptr_t>(p)); }

  // The buffer holding p, and p's offset in it: convlab passes pointers inside allocations too.
  Location locate(const void* p) const {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    auto it = buffers_.upper_bound(address);  // the first buffer that starts after p
    if (it != buffers_.begin()) {
      --it;
      if (address - it->first < it->second.length) return {it->second, address - it->first};
    }
    throw std::logic_error("metal: a pointer that is in no buffer this runtime allocated");
  }

  void encode(const Dispatch& d, std::span<const Binding> bindings) override {
    id<MTLComputePipelineState> pipeline = pipelines_.at(static_cast<std::size_t>(d.function));
    const NSUInteger threads = NSUInteger{d.threads[0]} * d.threads[1] * d.threads[2];
    if (threads > pipeline.maxTotalThreadsPerThreadgroup)
      throw InputError(fmt::format("metal: {} needs {} threads per threadgroup; this device allows {}",
                                   to_string(d.function), threads, pipeline.maxTotalThreadsPerThreadgroup));
    if (bindings.size() > kMaxBindings)
      throw std::logic_error(fmt::format("metal: {} is given {} buffers", to_string(d.function), bindings.size()));
    if (d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0) return;  // an empty grid: nothing to run

    // Every buffer is found before anything is encoded, so a bad pointer leaves no half dispatch.
    std::array<Location, kMaxBindings> at;
    for (std::size_t i = 0; i < bindings.size(); ++i) {
      const Binding& b = bindings[i];
      if (b.bytes > kMaxBlockBytes) throw std::logic_error("metal: a parameter block over 4 KB");
      if (b.bytes == 0) at[i] = b.data != nullptr ? locate(b.data) : Location{dummy_, 0};
    }

    bool encoded = false;
    @autoreleasepool {
      if (encoder_ == nil) {
        command_buffer_ = [queue_ commandBuffer];  // it retains what its encoders are given
        encoder_ = [command_buffer_ computeCommandEncoder];  // serial: a dispatch sees the writes before it
      }
      if (encoder_ != nil) {
        [encoder_ setComputePipelineState:pipeline];
        for (std::size_t i = 0; i < bindings.size(); ++i) {
          if (bindings[i].bytes != 0)
            [encoder_ setBytes:bindings[i].data length:bindings[i].bytes atIndex:i];
          else
            [encoder_ setBuffer:at[i].buffer offset:at[i].offset atIndex:i];
        }
        [encoder_ dispatchThreadgroups:MTLSizeMake(d.groups[0], d.groups[1], d.groups[2])
                 threadsPerThreadgroup:MTLSizeMake(d.threads[0], d.threads[1], d.threads[2])];
        encoded = true;
      }
    }
    if (!encoded) {
      command_buffer_ = nil;
      throw std::runtime_error("metal: cannot make a command buffer");
    }
  }
};

}  // namespace

MetalDeviceInfo probe_metal_device() {
  MetalDeviceInfo info;
  @autoreleasepool {
    info.os_version = utf8(NSProcessInfo.processInfo.operatingSystemVersionString);
    id<MTLDevice> device = default_device();
    if (device == nil) {
      info.error = kNoDevice;
    } else {
      info.name = utf8(device.name);
      info.family = gpu_family(device);
      info.recommended_working_set_bytes = device.recommendedMaxWorkingSetSize;
      info.unified_memory = device.hasUnifiedMemory;
      info.present = load_library(device, info.error) != nil;
    }
  }
  return info;
}

MetalRuntime& metal_runtime() {
  static Runtime runtime;  // made on first use; a constructor that throws is tried again next call
  return runtime;
}

}  // namespace convlab::metal
