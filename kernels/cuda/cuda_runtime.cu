// Host code of the CUDA backend: the only place in convlab that launches kernels with <<< >>>.
// Every kernel file of cuda_kernels.inc is compiled here by nvcc (through the list the build
// generates from it), so that each row's launch is instantiated with the stream launch below.
#include "kernels/cuda/cuda_runtime.hpp"

#include <cuda_runtime.h>

#include <new>
#include <stdexcept>
#include <string>

#include "generated/cuda_kernel_sources.inc"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "kernels/cuda/launching_runtime.hpp"

namespace convlab::cuda {

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so the next batch starts clean
    throw std::bad_alloc();
  }
  throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

struct StreamLaunch {
  cudaStream_t stream = nullptr;
  template <class... P, class... A>
  void operator()(const LaunchShape& s, void (*kernel)(P...), A&&... args) {
    kernel<<<dim3(s.grid[0], s.grid[1], s.grid[2]), dim3(s.block[0], s.block[1], s.block[2]), s.shared_bytes, stream>>>(
        std::forward<A>(args)...);
    check(cudaGetLastError(), "kernel launch");
  }
};

class Runtime final : public LaunchingRuntime<CudaRuntime, StreamLaunch> {
 public:
  Runtime() {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&launch_.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~Runtime() override {  // the process is ending: errors no longer matter
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(launch_.stream);
  }

  std::string_view name() const override { return "cuda"; }

  void upload(float* device, const float* host, std::size_t floats) override {
    check(cudaMemcpyAsync(device, host, floats * sizeof(float), cudaMemcpyHostToDevice, launch_.stream), "upload");
  }
  void download(float* host, const float* device, std::size_t floats) override {
    check(cudaMemcpyAsync(host, device, floats * sizeof(float), cudaMemcpyDeviceToHost, launch_.stream), "download");
  }
  void synchronize() override { check(cudaStreamSynchronize(launch_.stream), "cudaStreamSynchronize"); }

  bool has_device_timer() const override { return true; }
  void record_start() override { check(cudaEventRecord(start_, launch_.stream), "cudaEventRecord"); }
  void record_stop() override { check(cudaEventRecord(stop_, launch_.stream), "cudaEventRecord"); }
  double elapsed_ms() override {
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

  void capture(const std::function<void()>& body) override {
    if (exec_ != nullptr) check(cudaGraphExecDestroy(exec_), "cudaGraphExecDestroy");
    exec_ = nullptr;
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(launch_.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      body();
    } catch (...) {
      cudaStreamEndCapture(launch_.stream, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check(cudaStreamEndCapture(launch_.stream, &graph), "cudaStreamEndCapture");
    const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "cudaGraphInstantiate");
  }
  void replay() override {
    if (exec_ == nullptr) throw std::logic_error("replay() before capture()");
    check(cudaGraphLaunch(exec_, launch_.stream), "cudaGraphLaunch");
  }

  std::optional<std::size_t> device_bytes_in_use() override {
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    return total_bytes - free_bytes;  // every process's, as cudaMemGetInfo sees it
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;

  float* device_allocate(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return static_cast<float*>(p);
  }
  void device_free(float* p) noexcept override { cudaFree(p); }
};

}  // namespace

CudaRuntime& cuda_runtime() {
  if (const BackendStatus s = backend_status(Backend::cuda); !s.available) throw InputError("backend cuda: " + s.detail);
  static Runtime runtime;  // after the probe: never made on a machine without a device
  return runtime;
}

}  // namespace convlab::cuda
