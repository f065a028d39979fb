// Helpers shared by the convolution tests: deterministic data and the accuracy bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/backends.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/cuda/dispatch.hpp"
#include "kernels/gpu/gpu_conv.hpp"
#include "models/network.hpp"
#ifdef CONVLAB_WITH_CUDA
#include "kernels/cuda/cuda_runtime.hpp"
#endif
#ifdef CONVLAB_WITH_METAL_EMULATOR
#include "metal/dispatch.hpp"
#endif

namespace convlab::test {

// A random problem from one of four families, so that specialised kernels (depthwise,
// pointwise, 3x3 stride 1) meet many problems they support: odd sizes, channel counts that are
// not multiples of any SIMD width, C = 3, K = 17, strides 1-2, padding 0-2 (one in four padded
// one more or less below or to the right: ONNX's asymmetric pads), dilation 1-2 (oneDNN's 0-1),
// batch 1-5, kernels 1x1 to 7x7.
inline ConvProblem random_problem(std::mt19937& rng) {
  auto pick = [&rng](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng));
  };
  auto between = [&rng](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  for (;;) {
    ConvProblem p;
    p.n = between(1, 5);
    p.h = between(1, 19);
    p.w = between(1, 19);
    p.c = pick({1, 3, 4, 5, 8, 16, 17, 24, 32, 33});
    p.k = pick({1, 3, 8, 16, 17, 32});
    p.stride_h = p.stride_w = between(1, 2);
    p.pad_h = p.pad_w = between(0, 2);
    switch (between(0, 3)) {
      case 0:  // depthwise
        p.k = p.groups = p.c;
        p.r = p.s = pick({3, 5});
        break;
      case 1:  // pointwise
        p.r = p.s = 1;
        p.pad_h = p.pad_w = 0;
        break;
      case 2:  // 3x3 stride 1: the Winograd family
        p.r = p.s = 3;
        p.stride_h = p.stride_w = 1;
        p.pad_h = p.pad_w = between(0, 1);
        break;
      default:  // anything, grouped now and then
        p.r = pick({1, 3, 5, 7});
        p.s = pick({1, 3, 5});
        p.dilation_h = between(1, 2);
        p.dilation_w = between(1, 2);
        if (p.c % 2 == 0 && p.k % 2 == 0 && between(0, 3) == 0) p.groups = 2;
    }
    if (between(0, 3) == 0)
      p = p.with_end_padding(std::max<std::int64_t>(0, p.pad_h + between(-1, 1)),
                             std::max<std::int64_t>(0, p.pad_w + between(-1, 1)));
    const std::int64_t extent_h = (p.r - 1) * p.dilation_h + 1;
    if (p.out_h() >= 1 && p.out_w() >= 1 && p.pad_h < extent_h && p.pad_bottom() < extent_h) return p;
  }
}

// Random problems per kernel in the sweeps: 300, or CONVLAB_SWEEP_PROBLEMS.
inline std::size_t sweep_size() {
  const char* env = std::getenv("CONVLAB_SWEEP_PROBLEMS");  // the longer sweep: e.g. 5000
  return env != nullptr ? static_cast<std::size_t>(std::strtoul(env, nullptr, 10)) : 300;
}

// The sanitizer and emulated-ISA runs (tools/bootstrap.sh shortens their sweep): there the tests
// whose time is the GPU emulator's leave out what repeats the native run's coverage.
inline bool short_run() { return sweep_size() < 300; }

inline std::vector<float> random_values(std::int64_t count, std::uint64_t stream) {
  std::vector<float> v(static_cast<std::size_t>(count));
  fill_uniform(v, 1234, stream);
  return v;
}

// Where a test runs a kernel: CPU kernels on the host; CUDA kernels on the CPU emulator (always)
// and on the GPU when there is one; Metal kernels on the emulator (where clang built them).
// Tests loop over executors(kernel), so a kernel is tested wherever it can run.
struct Executor {
  const char* name;
  gpu::GpuRuntime* gpu = nullptr;  // null: the host
  Backend backend = Backend::cpu;   // whose kernels it runs
};

inline gpu::GpuRuntime& emulator() {
  static const std::unique_ptr<gpu::GpuRuntime> runtime = cuda::make_emulated_runtime();
  return *runtime;
}

#ifdef CONVLAB_WITH_METAL_EMULATOR
inline gpu::GpuRuntime& metal_emulator() {
  static const std::unique_ptr<gpu::GpuRuntime> runtime = metal::make_emulated_runtime();
  return *runtime;
}
#endif

// Every GPU runtime here: the CUDA emulator, the CUDA device when there is one, the Metal
// emulator where it is built.
inline std::vector<Executor> gpu_runtimes() {
  std::vector<Executor> e{{"emulator", &emulator(), Backend::cuda}};
#ifdef CONVLAB_WITH_CUDA
  if (backend_status(Backend::cuda).available) e.push_back({"gpu", &cuda::cuda_runtime(), Backend::cuda});
#endif
#ifdef CONVLAB_WITH_METAL_EMULATOR
  e.push_back({"metal-emulator", &metal_emulator(), Backend::metal});
#endif
  return e;
}

inline std::vector<Executor> executors(const KernelInfo& kernel) {
  if (kernel.backend == Backend::cpu) return {{"host"}};
  std::vector<Executor> e;
  for (const Executor& where : gpu_runtimes())
    if (where.backend == kernel.backend) e.push_back(where);
  return e;
}

// Runs a GPU kernel through GpuConv on `gpu`: device buffers in, device buffers out.
inline std::vector<float> run_on_gpu(gpu::GpuRuntime& gpu, const KernelInfo& kernel, const ConvProblem& p,
                                     const std::vector<float>& input, const std::vector<float>& weight,
                                     const std::vector<float>& bias, Activation activation) {
  const gpu::GpuConv conv(gpu, kernel.id, p, ConvWeights{weight, bias}, Epilogue{.activation = activation});
  const gpu::DeviceBuffer in(gpu, input.size()), out(gpu, static_cast<std::size_t>(p.output_elems()));
  std::vector<float> result(out.size());
  gpu.upload(in.data(), input.data(), input.size());
  conv.run(in.data(), out.data());
  gpu.download(result.data(), out.data(), out.size());
  gpu.synchronize();
  return result;
}

// On the host (CPU kernels).
inline std::vector<float> run_kernel(const KernelInfo& kernel, const ConvProblem& p, const std::vector<float>& input,
                                     const std::vector<float>& weight, const std::vector<float>& bias,
                                     Activation activation) {
  auto planned = kernel.plan(p, ConvWeights{weight, bias}, Epilogue{.activation = activation});
  std::vector<float> out(static_cast<std::size_t>(p.output_elems()));
  std::vector<unsigned char> workspace(planned->workspace_bytes() + 64);
  planned->run(input.data(), out.data(), workspace.data());
  return out;
}

inline std::vector<float> run_kernel(const KernelInfo& kernel, const Executor& where, const ConvProblem& p,
                                     const std::vector<float>& input, const std::vector<float>& weight,
                                     const std::vector<float>& bias, Activation activation) {
  if (where.gpu != nullptr) return run_on_gpu(*where.gpu, kernel, p, input, weight, bias, activation);
  return run_kernel(kernel, p, input, weight, bias, activation);
}

// A test over one backend's kernels that cannot run any of them here says so instead of passing
// having run nothing: it prints "SKIPPED: <why>", which ctest reports as a skipped test
// (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt). True when the caller should return.
inline bool skipped_here(Backend backend) {
  for (const KernelInfo& k : all_kernels())
    if (k.backend == backend && !executors(k).empty()) return false;
  const char* why = backend == Backend::metal
                        ? "the Metal kernels run here only on the CPU emulator, which this build lacks (it needs clang)"
                        : "no executor for them in this build";
  std::printf("SKIPPED: %s kernels: %s\n", std::string(to_string(backend)).c_str(), why);
  return true;
}

inline std::vector<float> absolute(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

}  // namespace convlab::test
