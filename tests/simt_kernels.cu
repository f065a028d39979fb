// Small kernels that exercise the emulator (kernels/simt/): CUDA source compiled as C++ (the
// tests CMakeLists sets LANGUAGE CXX), launched by test_simt.cpp. Some hold planted bugs.
#include "kernels/simt/simt.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cuda/mma_s8.cuh"
#include "tests/simt_kernels.hpp"

namespace convlab::simt_test {

namespace {
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ unsigned linear_thread() {
  return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
}
__device__ __forceinline__ unsigned linear_block() {
  return blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
}
// A __shared__ inside an inline device function: a comdat static, unlike the kernels' own.
__device__ __forceinline__ float* inline_scratch() {
  __shared__ float scratch[64];
  return scratch;
}
}  // namespace

__global__ void write_indices(unsigned* out) {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  unsigned* o = out + 12 * (linear_block() * threads + linear_thread());
  const unsigned values[12] = {threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z,
                               blockDim.x,  blockDim.y,  blockDim.z,  gridDim.x,  gridDim.y,  gridDim.z};
  for (int k = 0; k < 12; ++k) o[k] = values[k];
}

template <int Block>
__global__ void __launch_bounds__(Block) block_sum(const float* in, float* out, int n) {
  __shared__ float partial[Block];
  const unsigned t = threadIdx.x;
  const int i = static_cast<int>(blockIdx.x * Block + t);
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
#pragma unroll
  for (unsigned stride = Block / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
template void block_sum<256>(const float*, float*, int);
template void block_sum<1024>(const float*, float*, int);

__global__ void early_exit_sum(float* out, int* barrier_count) {
  __shared__ float values[64];
  const unsigned t = threadIdx.x;
  values[t] = static_cast<float>(t);
  if (t >= 48) return;  // these leave the barrier; the other 48 must not wait for them
  const int arrived = __syncthreads_count(1);
  if (t == 0) {
    float sum = 0;
    for (int k = 0; k < 64; ++k) sum += values[k];
    out[0] = sum;
    *barrier_count = arrived;
  }
}

__global__ void warp_ops(const float* in, float* down, float* xor_all, unsigned* ballots, int* scan,
                         float* broadcast) {
  const unsigned t = threadIdx.x;
  const unsigned lane = t % warpSize;
  const float v = in[t];
  float d = v;
  for (unsigned offset = 16; offset > 0; offset /= 2) d += __shfl_down_sync(kFull, d, offset);
  if (lane == 0) down[t / warpSize] = d;
  float x = v;
  for (int mask = 16; mask > 0; mask /= 2) x += __shfl_xor_sync(kFull, x, mask);
  xor_all[t] = x;
  const unsigned ballot = __ballot_sync(kFull, v > 0.0f);
  if (lane == 0) ballots[t / warpSize] = ballot;
  int s = static_cast<int>(v);
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const int up = __shfl_up_sync(kFull, s, offset);
    if (lane >= offset) s += up;
  }
  scan[t] = s;
  broadcast[t] = __shfl_sync(kFull, v, 0);
}

__global__ void histogram(const int* in, int n, unsigned* bins, int* max_value) {
  const int stride = static_cast<int>(blockDim.x * gridDim.x);
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += stride) {
    atomicAdd(&bins[in[i]], 1u);
    atomicMax(max_value, in[i]);
  }
}

__global__ void scale4(const float4* in, float4* out, float s, int n4) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n4) return;
  const float4 v = __ldg(&in[i]);
  out[i] = make_float4(v.x * s, v.y * s, fmaf(v.z, s, 0.0f), max(v.w * s, -1e30f));
}

template <int N>
__global__ void missing_barrier(float* out) {
  __shared__ float in_template[N];
  float* in_inline = inline_scratch();
  CONVLAB_DYNAMIC_SHARED(float, dynamic);
  const unsigned t = threadIdx.x;
  in_template[t] = 1.0f;
  in_inline[t] = 2.0f;
  dynamic[t] = 3.0f;
  // BUG (planted): a __syncthreads() belongs here; slot t + 1 is written by the next thread.
  const unsigned next = (t + 1) % N;
  float* o = out + 3 * (blockIdx.x * N + t);
  o[0] = in_template[next];
  o[1] = in_inline[next];
  o[2] = dynamic[next];
}
template void missing_barrier<64>(float*);

__global__ void missing_barrier_plain(float* out) {
  __shared__ float slots[32];
  const unsigned t = threadIdx.x;
  slots[t] = 1.0f;
  out[t] = slots[(t + 1) % 32];  // BUG (planted): no barrier between the write and the read
}

const int divergent_line_a = __LINE__ + 4;
const int divergent_line_b = __LINE__ + 6;
__global__ void divergent_barrier() {
  if (threadIdx.x < 32) {
    __syncthreads();
  } else {
    // BUG (planted): a second barrier the first warp never reaches.
    __syncthreads();
  }
}

__global__ void warp_barrier_deadlock(float* out) {
  float v = 1.0f;
  if (threadIdx.x == 0)
    __syncthreads();  // BUG (planted): lane 0 never reaches the shuffle its warp waits in
  else
    v = __shfl_down_sync(kFull, v, 1);
  out[threadIdx.x] = v;
}

namespace {
struct CountsDestruction {
  int* counter;
  ~CountsDestruction() { ++*counter; }
};
}  // namespace

__global__ void throwing_kernel(int bad, int* destroyed) {
  const CountsDestruction local{destroyed};
  __syncthreads();
  if (static_cast<int>(threadIdx.x) == bad) throw std::runtime_error("kernel thread " + std::to_string(bad) + " failed");
  __syncthreads();
}

__global__ void barrier_loop(int iterations, int* out) {
  int k = 0;
  for (; k < iterations; ++k) __syncthreads();
  if (threadIdx.x == 0) *out = k;
}

__global__ void dp4a_values(const int* a, const int* b, const int* c, int* signed_out, unsigned* unsigned_out) {
  const unsigned i = threadIdx.x;
  signed_out[i] = __dp4a(a[i], b[i], c[i]);
  unsigned_out[i] = __dp4a(static_cast<unsigned>(a[i]), static_cast<unsigned>(b[i]), static_cast<unsigned>(c[i]));
}

namespace {
__device__ __forceinline__ unsigned word_at(const signed char* p) {
  unsigned w;
  std::memcpy(&w, p, 4);
  return w;
}
}  // namespace

__global__ void mma_tile(const signed char* a, const signed char* b, const int* c, int* d, int lanes) {
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
  if (lane >= lanes) return;
  const unsigned fa[4] = {word_at(a + g * 32 + 4 * t), word_at(a + (g + 8) * 32 + 4 * t), word_at(a + g * 32 + 16 + 4 * t),
                          word_at(a + (g + 8) * 32 + 16 + 4 * t)};
  const unsigned fb[2] = {word_at(b + g * 32 + 4 * t), word_at(b + g * 32 + 16 + 4 * t)};
  const int fc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  int fd[4];
  mma_m16n8k32_s8(fd, fa, fb, fc);
  d[g * 8 + 2 * t] = fd[0];
  d[g * 8 + 2 * t + 1] = fd[1];
  d[(g + 8) * 8 + 2 * t] = fd[2];
  d[(g + 8) * 8 + 2 * t + 1] = fd[3];
}

}  // namespace convlab::simt_test
