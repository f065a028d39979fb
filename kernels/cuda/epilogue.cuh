// The epilogue every CUDA convolution kernel shares, and the launch-size helpers. Plain C++ that
// nvcc and the CPU emulator (kernels/simt/) both compile.
#pragma once

#include "kernels/gpu/conv_args.hpp"
#include "kernels/simt/simt.hpp"

namespace convlab::cuda {

// The CUDA kernels speak the backend-neutral argument types (kernels/gpu/conv_args.hpp).
using gpu::ConvArgs, gpu::ConvShape, gpu::FusedPool, gpu::Int8ConvArgs, gpu::PoolArgs, gpu::PoolArgsU8, gpu::AddArgsU8;
using gpu::kActNone, gpu::kActRelu, gpu::kActRelu6;
using gpu::kPoolNone, gpu::kPoolMax, gpu::kPoolAvg, gpu::kPoolGlobalAvg;

// Output element i of an NCHW output (ow fastest), for the kernels with a thread per output
// (cuda.00, cuda.22): its image, channel, position, and the first input channel of its group.
struct OutputElement {
  int n, k, oy, ox, c0;
};
__device__ __forceinline__ OutputElement output_element(const ConvShape& p, long long i) {
  const long long plane = static_cast<long long>(p.oh) * p.ow;
  const int k = static_cast<int>(i / plane % p.k);
  return {static_cast<int>(i / (plane * p.k)), k, static_cast<int>(i / p.ow % p.oh), static_cast<int>(i % p.ow),
          k / (p.k / p.groups) * (p.c / p.groups)};
}

// out = act(acc + bias[k] + residual[i]). Like the CPU's `activate`, NaN passes through the ReLU
// (a comparison with NaN is false), so a broken input is never hidden.
__device__ __forceinline__ float conv_epilogue(const ConvArgs& a, int k, long long i, float acc) {
  if (a.bias != nullptr) acc += a.bias[k];
  if (a.residual != nullptr) acc += a.residual[i];
  if (a.activation != kActNone) {
    acc = acc < 0.0f ? 0.0f : acc;
    if (a.activation == kActRelu6 && acc > 6.0f) acc = 6.0f;
  }
  return acc;
}

// A block's finished tile of `rows` output channels (from k0) x `cols` pixels (from pix0, over
// the whole batch), staged in shared memory with row stride `ld`, written to NCHW through the
// epilogue by the block's `threads` threads: consecutive threads on consecutive pixels.
__device__ __forceinline__ void write_tile_nchw(const ConvArgs& a, const float* tile, int ld, int rows, int cols, int k0,
                                                long long pix0, int thread, int threads) {
  const long long plane = static_cast<long long>(a.p.oh) * a.p.ow, pixels = plane * a.p.n;
  for (int i = thread; i < rows * cols; i += threads) {
    const int m = i / cols, j = i % cols;
    const int k = k0 + m;
    const long long q = pix0 + j;
    if (k >= a.p.k || q >= pixels) continue;
    const long long o = (q / plane * a.p.k + k) * plane + q % plane;
    a.out[o] = conv_epilogue(a, k, o, tile[m * ld + j]);
  }
}

// ceil(a / b) for launch sizes.
__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
// a rounded up to a multiple of b.
__host__ __device__ constexpr int round_up(int a, int b) { return ceil_div(a, b) * b; }

}  // namespace convlab::cuda
