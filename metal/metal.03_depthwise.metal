// metal.03_depthwise: depthwise convolution (groups = C = K), a 16 x 16 tile of one plane per
//   threadgroup.
//
// What changes against metal.00: each output channel reads one input channel, so there is no
//   reduction across channels to share: a threadgroup stages one channel's input patch (tile and
//   halo) in threadgroup memory and each thread computes one output from it, its R x S taps read
//   once into registers.
// Why faster: every input value is read from device memory once per tile instead of R x S
//   times; depthwise layers do R x S FMAs per output, so they are bound by memory traffic, and
//   this cuts it to about one read per input and one write per output.
// Supports: depthwise only, patch height x width <= 1600 and R x S <= 25 (depthwise_patch_fits,
//   metal/dispatch.cpp).
// Measured: not yet measured on a GPU (no Mac has run these kernels; the emulator checks results,
//   not speed).
// Run: build/convlab conv --backend metal --problem g32mb32ic32ih56oc32oh56kh3ph1 --kernel metal.03_depthwise
#include <metal_stdlib>
#include "conv_epilogue.h"
using namespace metal;

#define TILE 16
#define PATCH_CAPACITY 1600
#define TAPS_CAPACITY 25

// threadgroups: x = output tiles of a plane, y = channel, z = image; 16 x 16 threads
kernel void conv_depthwise(device const float* in [[buffer(0)]], device const float* weight [[buffer(1)]],
                           device const float* bias [[buffer(2)]], device const float* residual [[buffer(3)]],
                           device float* out [[buffer(4)]], constant MetalConv& p [[buffer(5)]],
                           uint3 group [[threadgroup_position_in_grid]],
                           uint3 local [[thread_position_in_threadgroup]]) {
  threadgroup float patch[PATCH_CAPACITY];
  const int patch_h = (TILE - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1;
  const int patch_w = (TILE - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1;
  const int tiles_w = (p.ow + TILE - 1) / TILE;
  const int oy0 = int(group.x) / tiles_w * TILE, ox0 = int(group.x) % tiles_w * TILE;
  const int c = int(group.y), n = int(group.z);
  const int tid = int(local.y) * TILE + int(local.x);
  device const float* plane = in + (n * p.c + c) * p.h * p.w;
  for (int i = tid; i < patch_h * patch_w; i += TILE * TILE) {
    const int y = oy0 * p.stride_h - p.pad_h + i / patch_w, x = ox0 * p.stride_w - p.pad_w + i % patch_w;
    patch[i] = y >= 0 && y < p.h && x >= 0 && x < p.w ? plane[y * p.w + x] : 0.0f;
  }
  float taps[TAPS_CAPACITY];
  for (int t = 0; t < p.r * p.s; ++t) taps[t] = weight[c * p.r * p.s + t];
  threadgroup_barrier(mem_flags::mem_threadgroup);

  const int oy = oy0 + int(local.y), ox = ox0 + int(local.x);
  if (oy >= p.oh || ox >= p.ow) return;
  float acc = 0.0f;
  for (int r = 0; r < p.r; ++r)
    for (int s = 0; s < p.s; ++s)
      acc = fma(patch[(int(local.y) * p.stride_h + r * p.dil_h) * patch_w + int(local.x) * p.stride_w + s * p.dil_w],
                taps[r * p.s + s], acc);
  const uint i = uint(((n * p.c + c) * p.oh + oy) * p.ow + ox);
  out[i] = conv_epilogue(p, bias, residual, c, i, acc);
}
