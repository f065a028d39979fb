// Whether each backend can run on this machine, and if not, why. Asked once per process by the
// CLI and the tests: a backend that is not available is skipped with this one-line reason.
#pragma once

#include <string>

#include "kernels/common/kernel.hpp"

namespace convlab {

struct BackendStatus {
  bool available = false;
  std::string detail;  // the device when available, else why not (e.g. "no CUDA device: ...")
};

BackendStatus backend_status(Backend backend);

namespace gpu {
class GpuRuntime;
}
// The process's runtime of a GPU backend (cuda, metal) when backend_status says it is available,
// else null (also for the CPU). The network executor, the GPU lab and validation run on it.
gpu::GpuRuntime* gpu_runtime(Backend backend);

}  // namespace convlab
