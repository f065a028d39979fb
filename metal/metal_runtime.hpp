// The Metal backend's host on macOS (metal/metal_runtime.mm, Objective-C++): one device, one
// command queue, the kernels' metallib built with the project, a compute pipeline per MSL
// function. This header is plain C++ so that the registry, the CLI and the tests can include it.
// Built only with CONVLAB_WITH_METAL (CMake on macOS).
#pragma once

#include <cstdint>
#include <string>

#include "metal/dispatch.hpp"

namespace convlab::metal {

struct MetalDeviceInfo {
  bool present = false;
  std::string error;       // why not, when !present: no device, or the metallib did not load
  std::string name;        // e.g. "Apple M2 Pro"
  std::string os_version;  // macOS's own string, e.g. "Version 14.5 (Build 23F79)"
  std::string family;      // the newest it supports of Apple9, Apple8, Apple7, Mac2 (in that order)
  std::uint64_t recommended_working_set_bytes = 0;  // what the GPU can use without hurting performance
  bool unified_memory = false;
};

// Never throws: on a Mac without a usable device, or without the metallib, it says why.
MetalDeviceInfo probe_metal_device();

// The process's runtime, made on first use. Throws InputError with a one-line reason when there
// is no device or the library (or one of its pipelines) cannot be made.
MetalRuntime& metal_runtime();

}  // namespace convlab::metal
