// The real GPU behind GpuRuntime: device 0, one non-blocking stream for everything convlab
// submits, an event pair on that stream for the device timer, and CUDA Graph capture and replay.
// Built only with CONVLAB_WITH_CUDA; this header keeps <cuda_runtime.h> out of its includers.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/gpu/runtime.hpp"

namespace convlab::cuda {

class CudaRuntime : public gpu::GpuRuntime {
 public:
  // Captures what `body` submits to the stream into a graph (replacing any earlier one);
  // replay() launches that graph on the stream. Nothing runs during capture.
  virtual void capture(const std::function<void()>& body) = 0;
  virtual void replay() = 0;
};

// The process's runtime, made on first use. Throws InputError when there is no usable device.
CudaRuntime& cuda_runtime();

}  // namespace convlab::cuda
