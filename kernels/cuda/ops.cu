// The other operators a network needs, on the GPU, with the CPU ops' semantics
// (kernels/cpu/ops.hpp): floor-mode pooling, padding never wins a max and counts as zero in an
// average; softmax subtracts the row's max. Plain kernels: they are a small share of the time.
// Reductions use one warp per output and warp shuffles, so the CPU emulator exercises those too.
#include <cmath>

#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/cuda/reductions.cuh"

namespace convlab::cuda {

// One thread per output; `average` selects avg (else max) pooling.
__global__ void pool2d(PoolArgs a, int average) {
  const long long total = static_cast<long long>(a.planes) * a.oh * a.ow;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ox = static_cast<int>(i % a.ow), oy = static_cast<int>(i / a.ow % a.oh);
  const float* plane = a.in + i / (static_cast<long long>(a.ow) * a.oh) * a.h * a.w;
  a.out[i] = pool_window(average ? kPoolAvg : kPoolMax, a.h, a.w, a.kernel, a.stride, a.pad, oy, ox,
                         [&](int y, int x) { return plane[y * a.w + x]; });
}

// One warp per plane (n, c): out = mean of the plane.
__global__ void global_avg_pool(const float* in, int planes, int plane_size, float* out) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= planes) return;  // whole warps leave together
  float sum = 0.0f;
  for (int i = lane; i < plane_size; i += 32) sum += in[static_cast<long long>(warp) * plane_size + i];
  sum = warp_sum(sum);
  if (lane == 0) out[warp] = sum / static_cast<float>(plane_size);
}

// One warp per output (n, o): y = x . W[o] + b[o], optionally ReLU.
__global__ void linear(const float* in, int batch, int in_features, const float* weight, const float* bias,
                       int out_features, float* out, int relu) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= batch * out_features) return;
  const int n = warp / out_features, o = warp % out_features;
  const float* x = in + static_cast<long long>(n) * in_features;
  const float* w = weight + static_cast<long long>(o) * in_features;
  float sum = 0.0f;
  for (int i = lane; i < in_features; i += 32) sum += x[i] * w[i];
  sum = warp_sum(sum);
  if (lane != 0) return;
  if (bias != nullptr) sum += bias[o];
  out[warp] = relu && sum < 0.0f ? 0.0f : sum;
}

__global__ void add(const float* a, const float* b, float* out, long long count, int relu) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float v = a[i] + b[i];
  out[i] = relu && v < 0.0f ? 0.0f : v;
}

// One warp per row: max, then the sum of exponentials, both by shuffles; every lane gets them.
__global__ void softmax(const float* in, int batch, int classes, float* out) {
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= batch) return;
  const float* x = in + static_cast<long long>(row) * classes;
  float* y = out + static_cast<long long>(row) * classes;
  float top = -INFINITY;
  for (int i = lane; i < classes; i += 32) top = fmaxf(top, x[i]);
  for (int offset = 16; offset > 0; offset /= 2) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, offset));
  float sum = 0.0f;
  for (int i = lane; i < classes; i += 32) sum += expf(x[i] - top);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  for (int i = lane; i < classes; i += 32) y[i] = expf(x[i] - top) / sum;
}

}  // namespace convlab::cuda
