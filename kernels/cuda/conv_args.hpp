// What every CUDA convolution kernel receives, and the epilogue they all share. Plain C++ that
// nvcc, the host code and the CPU emulator (kernels/simt/) all compile.
//
// Shapes are 32-bit: GPU index arithmetic is fastest in 32 bits, and plan refuses tensors of
// 2^31 elements or more (see kernels/cuda/dispatch.hpp).
#pragma once

#include "kernels/simt/simt.hpp"

namespace convlab::cuda {

struct ConvShape {
  int n, c, h, w;    // input, NCHW
  int k, r, s;       // output channels, kernel height and width
  int stride_h, stride_w, pad_h, pad_w;
  int dil_h, dil_w;  // the step between taps (PyTorch's dilation: 1 = dense)
  int groups;
  int oh, ow;
};

// Mirrors convlab::Activation (kernels/common/kernel.hpp), which nvcc's C++17 device code does
// not include.
enum Act : int { kActNone = 0, kActRelu = 1, kActRelu6 = 2 };

// A pooling layer fused into the conv before it (models/gpu_network.cpp), in kernels that can
// (dispatch.hpp's fuses_pool): `out` then holds the pooled tensor, n x k x oh x ow (1 x 1 for a
// global average), and the conv's own output is never stored. Semantics as kernels/cuda/ops.cu's
// pool2d: floor mode, padding never wins a max and counts as zero in an average.
enum PoolKind : int { kPoolNone = 0, kPoolMax = 1, kPoolAvg = 2, kPoolGlobalAvg = 3 };
struct FusedPool {
  int kind;                 // PoolKind
  int kernel, stride, pad;  // kPoolMax and kPoolAvg
  int oh, ow;               // the pooled output's size
};

struct ConvArgs {
  ConvShape p;
  const float* in;        // n x c x h x w
  const float* weight;    // the layout the variant's plan prepared (OIHW unless it says otherwise)
  const float* bias;      // k values, or null
  const float* residual;  // n x k x oh x ow added before the activation, or null (ResNet's add)
  float* out;             // n x k x oh x ow
  int activation;         // Act
  FusedPool pool;         // kind kPoolNone (zero) unless a pool is fused
};

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
