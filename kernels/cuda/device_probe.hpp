// The CUDA device probe: plain C++ interface, implemented in device_probe.cu. Built only with
// CONVLAB_WITH_CUDA. It never throws and never aborts: on a machine without a GPU or driver it
// reports the CUDA runtime's own explanation.
#pragma once

#include <string>

namespace convlab::cuda {

struct DeviceInfo {
  bool present = false;
  std::string error;  // why no device, when !present
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  int runtime_version = 0;  // e.g. 13000 for 13.0
  int driver_version = 0;   // 0 when no driver is installed
  long long global_memory_bytes = 0;
  int sm_clock_mhz = 0, memory_clock_mhz = 0;  // the maximum clocks the driver reports; 0 if unknown
};

DeviceInfo probe_device();

// Launches a trivial kernel (y = a x + y on a few elements) and checks its result on the host:
// proof that the build's CUDA architectures run on this device. Empty string on success.
std::string smoke_test();

}  // namespace convlab::cuda
