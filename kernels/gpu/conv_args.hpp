// What every GPU convolution kernel receives, CUDA's and Metal's alike, and the pooling arguments
// of the ops. Plain C++17 structs of 32-bit ints and pointers, so that nvcc's device code, the host
// and the CPU emulator (kernels/simt/) all compile them; Metal's kernels get the same numbers as
// the plain-int blocks of metal/metal_params.h.
//
// Shapes are 32-bit: GPU index arithmetic is fastest in 32 bits, and plan refuses tensors of
// 2^31 elements or more (exceeds_32bit_indices, kernels/gpu/conv_kernel.hpp).
#pragma once

namespace convlab::gpu {

struct ConvShape {
  int n, c, h, w;    // input, NCHW
  int k, r, s;       // output channels, kernel height and width
  int stride_h, stride_w, pad_h, pad_w;
  int dil_h, dil_w;  // the step between taps (PyTorch's dilation: 1 = dense)
  int groups;
  int oh, ow;
};

// Mirrors convlab::Activation (kernels/common/kernel.hpp), which nvcc's device code does not
// include.
enum Act : int { kActNone = 0, kActRelu = 1, kActRelu6 = 2 };

// A pooling layer fused into the conv before it (models/gpu_network.cpp), in kernels whose row
// says fuses_pool: `out` then holds the pooled tensor, n x k x oh x ow (1 x 1 for a global
// average), and the conv's own output is never stored. Semantics as the ops' pool2d: floor mode,
// padding never wins a max and counts as zero in an average.
enum PoolKind : int { kPoolNone = 0, kPoolMax = 1, kPoolAvg = 2, kPoolGlobalAvg = 3 };
struct FusedPool {
  int kind;                 // PoolKind
  int kernel, stride, pad;  // kPoolMax and kPoolAvg
  int oh, ow;               // the pooled output's size
};

struct ConvArgs {
  ConvShape p;
  const float* in;        // n x c x h x w
  const float* weight;    // the layout the kernel's row prepared (OIHW unless it says otherwise)
  const float* bias;      // k values, or null
  const float* residual;  // n x k x oh x ow added before the activation, or null (ResNet's add)
  float* out;             // n x k x oh x ow
  int activation;         // Act
  FusedPool pool;         // kind kPoolNone (zero) unless a pool is fused
};

// A max or average pooling layer run on its own.
struct PoolArgs {
  const float* in;
  float* out;
  int planes, h, w, oh, ow;  // planes = n * c
  int kernel, stride, pad;
};

}  // namespace convlab::gpu
