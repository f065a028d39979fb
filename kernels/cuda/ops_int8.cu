// The other operators of an int8 network (models/gpu_int8_network.hpp), on quint8 bytes, with the
// arithmetic of kernels/cpu/ops.hpp's u8 twins operation for operation (the same roundings, the
// same float operations in the same order), so that a network's bytes on the GPU are the CPU's.
// Plain kernels, a thread per output (a warp per plane for the global average): they are a small
// share of the time.
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

namespace {
__device__ __forceinline__ unsigned char saturate_u8(int q) { return static_cast<unsigned char>(q < 0 ? 0 : q > 255 ? 255 : q); }
}  // namespace

// PyTorch's quantize_per_tensor, as quantize_u8 (kernels/common/quantize.hpp).
__global__ void quantize_u8(const float* in, unsigned char* out, long long count, float scale, int zero_point) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float r = rintf(in[i] / scale);
  if (!(r > -1024.0f)) {  // far outside (or NaN): saturates before the int conversion
    out[i] = r > 0.0f ? 255 : 0;
    return;
  }
  out[i] = saturate_u8(static_cast<int>(fminf(r, 1024.0f)) + zero_point);
}

__global__ void dequantize_u8(const unsigned char* in, float* out, long long count, float scale, int zero_point) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = scale * static_cast<float>(static_cast<int>(in[i]) - zero_point);
}

// One thread per output; `average` selects avg (else max) pooling.
__global__ void pool2d_u8(PoolArgsU8 a, int average) {
  const long long total = static_cast<long long>(a.planes) * a.oh * a.ow;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ox = static_cast<int>(i % a.ow), oy = static_cast<int>(i / a.ow % a.oh);
  const unsigned char* plane = a.in + i / (static_cast<long long>(a.ow) * a.oh) * a.h * a.w;
  int acc = 0;  // a max starts below every byte; a sum of (q - zero point) at the real 0
  for (int r = 0; r < a.kernel; ++r) {
    const int y = oy * a.stride - a.pad + r;
    if (y < 0 || y >= a.h) continue;
    for (int s = 0; s < a.kernel; ++s) {
      const int x = ox * a.stride - a.pad + s;
      if (x < 0 || x >= a.w) continue;
      const int v = plane[y * a.w + x];
      acc = average ? acc + v - a.zero_point : max(acc, v);
    }
  }
  if (average) acc = __float2int_rn(static_cast<float>(acc) / static_cast<float>(a.kernel * a.kernel)) + a.zero_point;
  a.out[i] = saturate_u8(acc);
}

// One warp per plane (n, c): the mean of its bytes, rounded half to even (the affine map commutes
// with a mean, so the zero point needs no correction).
__global__ void global_avg_pool_u8(const unsigned char* in, int planes, int plane_size, unsigned char* out) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= planes) return;  // whole warps leave together
  int sum = 0;  // at most 255 x plane_size: planes of 8M bytes fit
  for (int i = lane; i < plane_size; i += 32) sum += in[static_cast<long long>(warp) * plane_size + i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) out[warp] = saturate_u8(static_cast<int>(rint(static_cast<double>(sum) / static_cast<double>(plane_size))));
}

// A residual add with its own output quantisation, as ops::add_u8.
__global__ void add_u8(AddArgsU8 a) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.count) return;
  // __fmul_rn: the product stays its own rounding, never contracted into the fma, as on the CPU.
  const float y = fmaf(a.a_scale, static_cast<float>(static_cast<int>(a.a[i]) - a.a_zero_point),
                       __fmul_rn(a.b_scale, static_cast<float>(static_cast<int>(a.b[i]) - a.b_zero_point)));
  const int q = saturate_u8(__float2int_rn(y) + a.out_zero_point);
  a.out[i] = static_cast<unsigned char>(q < a.lo ? a.lo : q);
}

}  // namespace convlab::cuda
