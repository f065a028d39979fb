// The harness's view of a backend. Adding a backend means implementing Device (and a kernel
// list); the harness itself does not change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace convlab {

struct DeviceMemory {
  std::optional<std::uint64_t> in_use_bytes;  // device memory in use now (GPUs)
  std::optional<std::uint64_t> peak_bytes;    // device memory convlab allocated at peak (GPUs)
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda", "metal"
  // Waits until all work submitted so far has finished: the CPU joins its worker threads, CUDA
  // synchronises the stream, Metal waits for the command buffer.
  virtual void synchronize() = 0;

  // A device-side clock (CUDA events, Metal GPUStartTime/GPUEndTime), when the device has one.
  // mark_start() goes right before a run, mark_stop() right after; elapsed_ms() is read after
  // the next synchronize().
  virtual bool has_device_timer() const { return false; }
  virtual void mark_start() {}
  virtual void mark_stop() {}
  virtual double elapsed_ms() { return 0.0; }

  virtual DeviceMemory memory() const { return {}; }
};

// The CPU: kernels parallelise with OpenMP, whose parallel regions end with an implicit barrier,
// so when a run returns every worker has joined. synchronize() only needs a memory fence.
class CpuDevice final : public Device {
 public:
  std::string name() const override { return "cpu"; }
  void synchronize() override;
};

}  // namespace convlab
