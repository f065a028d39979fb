// metal.00_naive: one thread per output element.
//
// What it is: the CPU reference's loops turned inside out, as cuda.00: thread i computes output i
//   (ow fastest, so neighbouring threads of a SIMD-group write neighbouring addresses), summing
//   C/g x R x S products straight from device memory. Every stride, padding, dilation and group
//   count.
// Why it is slow: every input value is read R x S x K/g times and every weight once per output
//   pixel; the GPU's caches absorb part of it, but the ALUs mostly wait on memory. Expect a few
//   percent of the FP32 peak: the point is a baseline that is obviously right.
// Measured: not yet measured on a GPU (no Mac has run these kernels; the emulator checks results,
//   not speed).
// Run: build/convlab conv --backend metal --problem mb32ic64ih56oc64oh56kh3ph1 --kernel metal.00_naive
#include <metal_stdlib>
#include "conv_epilogue.h"
using namespace metal;

// buffers: 0 input, 1 weights (OIHW), 2 bias, 3 residual, 4 output, 5 MetalConv
kernel void conv_naive(device const float* in [[buffer(0)]], device const float* weight [[buffer(1)]],
                       device const float* bias [[buffer(2)]], device const float* residual [[buffer(3)]],
                       device float* out [[buffer(4)]], constant MetalConv& p [[buffer(5)]],
                       uint i [[thread_position_in_grid]]) {
  if (i >= uint(p.n * p.k * p.oh * p.ow)) return;
  const int ox = int(i % uint(p.ow));
  const int oy = int(i / uint(p.ow) % uint(p.oh));
  const int k = int(i / uint(p.ow * p.oh) % uint(p.k));
  const int n = int(i / uint(p.ow * p.oh * p.k));
  const int cpg = p.c / p.groups, kpg = p.k / p.groups;
  const int c0 = k / kpg * cpg;  // first input channel of this output channel's group
  float acc = 0.0f;
  for (int c = 0; c < cpg; ++c) {
    device const float* plane = in + (n * p.c + c0 + c) * p.h * p.w;
    device const float* taps = weight + (k * cpg + c) * p.r * p.s;
    for (int r = 0; r < p.r; ++r) {
      const int y = oy * p.stride_h - p.pad_h + r * p.dil_h;
      if (y < 0 || y >= p.h) continue;
      for (int s = 0; s < p.s; ++s) {
        const int x = ox * p.stride_w - p.pad_w + s * p.dil_w;
        if (x >= 0 && x < p.w) acc = fma(plane[y * p.w + x], taps[r * p.s + s], acc);
      }
    }
  }
  out[i] = conv_epilogue(p, bias, residual, k, i, acc);
}
