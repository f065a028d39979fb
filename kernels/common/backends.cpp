#include "kernels/common/backends.hpp"

#include <omp.h>

#include <fmt/format.h>

#ifdef CONVLAB_WITH_CUDA
#include "kernels/cuda/cuda_runtime.hpp"
#include "kernels/cuda/device_probe.hpp"
#endif
#ifdef CONVLAB_WITH_METAL
#include "metal/metal_runtime.hpp"
#endif

namespace convlab {

BackendStatus backend_status(Backend backend) {
  switch (backend) {
    case Backend::cpu:
      return {true, fmt::format("{} OpenMP threads available", omp_get_max_threads())};
    case Backend::cuda: {
#ifdef CONVLAB_WITH_CUDA
      static const cuda::DeviceInfo info = cuda::probe_device();  // the probe costs a driver call
      const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
      if (!info.present) return {false, "no CUDA device (" + info.error + ")"};
      return {true, fmt::format("{} (sm_{}{}, {} SMs at up to {} MHz, {:.1f} GiB at {} MHz), runtime {}, driver {}",
                                info.name, info.compute_major, info.compute_minor, info.sm_count, info.sm_clock_mhz,
                                static_cast<double>(info.global_memory_bytes) / (1 << 30), info.memory_clock_mhz,
                                version(info.runtime_version), version(info.driver_version))};
#else
      return {false, "no CUDA device: built without CUDA (CONVLAB_CUDA=OFF or nvcc not found)"};
#endif
    }
    case Backend::metal: {
#ifdef CONVLAB_WITH_METAL
      static const metal::MetalDeviceInfo info = metal::probe_metal_device();
      if (!info.present) return {false, "no Metal device (" + info.error + ")"};
      return {true, fmt::format("{} ({}, {:.1f} GiB working set{}), {}", info.name, info.family,
                                static_cast<double>(info.recommended_working_set_bytes) / (1 << 30),
                                info.unified_memory ? ", unified memory" : "", info.os_version)};
#elif defined(__APPLE__)
      return {false, "built without Metal (see metal/CMakeLists.txt)"};
#else
      return {false, "needs macOS"};
#endif
    }
  }
  return {false, "unknown backend"};
}

gpu::GpuRuntime* gpu_runtime(Backend backend) {
  if (!backend_status(backend).available) return nullptr;
#ifdef CONVLAB_WITH_CUDA
  if (backend == Backend::cuda) return &cuda::cuda_runtime();
#endif
#ifdef CONVLAB_WITH_METAL
  if (backend == Backend::metal) return &metal::metal_runtime();
#endif
  return nullptr;
}

}  // namespace convlab
