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

// What every int8 GPU convolution kernel receives (CUDA's: kernels/cuda/cuda_int8_kernels.inc):
// quint8 activations in and out, s8 weights in the layout the kernel's row prepared, and per
// output channel the constants of kernels/common/quantize.hpp's requantisation, which the kernel
// applies in its epilogue exactly as requantize_one does.
struct Int8ConvArgs {
  ConvShape p;
  const unsigned char* in;    // n x c x h x w quint8
  const signed char* weight;  // the layout the kernel's row prepared
  // Per output channel: (128 - in_zero_point) x the sum of its weights. The kernels multiply
  // x - 128 (x ^ 0x80, an s8) by the weights; adding this gives the sum of (x - zero point) x w.
  const int* compensation;
  const float* multiplier;  // per output channel: in_scale x weight_scale[k] / out_scale
  const float* offset;      // per output channel: bias[k] / out_scale
  unsigned char* out;       // n x k x oh x ow quint8
  int in_zero_point;        // the byte a padded tap reads: the real 0
  int out_zero_point, lo, hi;  // the requantisation's zero point, and its clamp (the activation)
};

// A max or average pooling layer run on its own.
struct PoolArgs {
  const float* in;
  float* out;
  int planes, h, w, oh, ow;  // planes = n * c
  int kernel, stride, pad;
};

// An int8 network's pooling layer on quint8 bytes, as kernels/cpu/ops.hpp's max_pool2d_u8 and
// avg_pool2d_u8: a max over the window's real taps; an average of (q - zero_point) over the
// window's area (padding, the real 0, adds nothing and counts), rounded half to even.
struct PoolArgsU8 {
  const unsigned char* in;
  unsigned char* out;
  int planes, h, w, oh, ow;  // planes = n * c
  int kernel, stride, pad;
  int zero_point;            // the input's (and the output's: a pool keeps its input's quantisation)
};

// An int8 residual add, as ops::add_u8: out = max(lo, saturate(nearbyint(fma(a_scale, a - a_zero_point,
// b_scale * (b - b_zero_point))) + out_zero_point)), the scales already divided by the output's.
struct AddArgsU8 {
  const unsigned char* a;
  const unsigned char* b;
  unsigned char* out;
  long long count;
  float a_scale, b_scale;
  int a_zero_point, b_zero_point, out_zero_point;
  int lo;  // the output zero point when a ReLU follows the add, else 0
};

}  // namespace convlab::gpu
