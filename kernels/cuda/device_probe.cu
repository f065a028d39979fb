// The CUDA device probe and a trivial compiled kernel. The real kernels come with the CUDA
// backend; this file proves the toolchain, the architectures and the no-device path.
#include "kernels/cuda/device_probe.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace convlab::cuda {

namespace {
std::string describe(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
}  // namespace

DeviceInfo probe_device() {
  DeviceInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    info.error = e != cudaSuccess ? describe(e) : "the driver reports zero devices";
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return info;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t pe = cudaGetDeviceProperties(&prop, 0); pe != cudaSuccess) {
    info.error = describe(pe);
    return info;
  }
  info.present = true;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.global_memory_bytes = static_cast<long long>(prop.totalGlobalMem);
  int khz = 0;  // cudaDeviceProp's clock fields are gone in CUDA 13; the attributes remain
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess) info.sm_clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess) info.memory_clock_mhz = khz / 1000;
  cudaGetLastError();  // an unknown attribute is not an error worth keeping
  return info;
}

std::string smoke_test() {
  constexpr int n = 256;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) { x[i] = static_cast<float>(i); y[i] = 1.0f; }
  float *dx = nullptr, *dy = nullptr;
  auto fail = [&](cudaError_t e) { cudaFree(dx); cudaFree(dy); return describe(e); };
  if (auto e = cudaMalloc(&dx, n * sizeof(float)); e != cudaSuccess) return fail(e);
  if (auto e = cudaMalloc(&dy, n * sizeof(float)); e != cudaSuccess) return fail(e);
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  saxpy<<<(n + 127) / 128, 128>>>(n, 2.0f, dx, dy);
  if (auto e = cudaGetLastError(); e != cudaSuccess) return fail(e);
  if (auto e = cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost); e != cudaSuccess) return fail(e);
  cudaFree(dx);
  cudaFree(dy);
  for (int i = 0; i < n; ++i)
    if (y[i] != 2.0f * static_cast<float>(i) + 1.0f) return "saxpy gave a wrong result at element " + std::to_string(i);
  return {};
}

}  // namespace convlab::cuda
