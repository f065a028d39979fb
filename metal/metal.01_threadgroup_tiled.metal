// metal.01_threadgroup_tiled: a threadgroup stages input and weight tiles in threadgroup memory.
//
// What changes against metal.00: a threadgroup of 16 x 16 threads owns a 16 x 16 output tile of
//   one image for 8 output channels (each thread 8 accumulators). For each chunk of 4 input
//   channels it copies the input patch under the tile (with its halo) and the 8 x 4 x R x S
//   weights into threadgroup memory once, behind a threadgroup_barrier, then every thread reads
//   them from there.
// Why faster: an input value read from device memory is reused by up to R x S threads and 8
//   output channels, a weight by all 256 threads, so device-memory traffic drops by about
//   R x S x 8. Still bound by threadgroup-memory loads (one per FMA). Expect 10-25% of peak.
// Supports: every stride, padding, dilation and group count while the patch fits the fixed
//   threadgroup arrays (Metal's limit is 32 KiB per threadgroup): patch height x width <= 1600
//   floats and R x S <= 25 (its rule, patch_fits, in metal/dispatch.cpp).
// Measured: not yet measured on a GPU (no Mac has run these kernels; the emulator checks results,
//   not speed).
// Run: build/convlab conv --backend metal --problem mb32ic64ih56oc64oh56kh3ph1 --kernel metal.01_threadgroup_tiled
#include <metal_stdlib>
#include "conv_epilogue.h"
using namespace metal;

// The tile sizes, as metal/dispatch.hpp's kTiled* constants.
#define TILE 16
#define OUT_CHANNELS 8
#define IN_CHANNELS 4
#define PATCH_CAPACITY 1600  // floats per channel of the input patch
#define TAPS_CAPACITY 25     // R x S

// threadgroups: x = output tiles of one image (tiles_w * tiles_h), y = groups * channel blocks, z = n
kernel void conv_threadgroup_tiled(device const float* in [[buffer(0)]], device const float* weight [[buffer(1)]],
                                   device const float* bias [[buffer(2)]], device const float* residual [[buffer(3)]],
                                   device float* out [[buffer(4)]], constant MetalConv& p [[buffer(5)]],
                                   uint3 group [[threadgroup_position_in_grid]],
                                   uint3 local [[thread_position_in_threadgroup]]) {
  threadgroup float patch[IN_CHANNELS * PATCH_CAPACITY];
  threadgroup float taps[OUT_CHANNELS * IN_CHANNELS * TAPS_CAPACITY];
  const int patch_h = (TILE - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1;
  const int patch_w = (TILE - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1;
  const int rs = p.r * p.s;
  const int tiles_w = (p.ow + TILE - 1) / TILE;
  const int oy0 = int(group.x) / tiles_w * TILE, ox0 = int(group.x) % tiles_w * TILE;
  const int cpg = p.c / p.groups, kpg = p.k / p.groups;
  const int blocks_per_group = (kpg + OUT_CHANNELS - 1) / OUT_CHANNELS;
  const int g = int(group.y) / blocks_per_group;
  const int k0 = g * kpg + int(group.y) % blocks_per_group * OUT_CHANNELS;  // first output channel here
  const int kcount = min(OUT_CHANNELS, (g + 1) * kpg - k0);
  const int n = int(group.z);
  const int tid = int(local.y) * TILE + int(local.x);

  float acc[OUT_CHANNELS];
  for (int j = 0; j < OUT_CHANNELS; ++j) acc[j] = 0.0f;

  for (int cc0 = 0; cc0 < cpg; cc0 += IN_CHANNELS) {
    // Stage the patch; zeros stand for padding and for channels past the group's end.
    for (int i = tid; i < IN_CHANNELS * patch_h * patch_w; i += TILE * TILE) {
      const int c = i / (patch_h * patch_w), yx = i % (patch_h * patch_w);
      const int y = oy0 * p.stride_h - p.pad_h + yx / patch_w, x = ox0 * p.stride_w - p.pad_w + yx % patch_w;
      const bool inside = cc0 + c < cpg && y >= 0 && y < p.h && x >= 0 && x < p.w;
      patch[c * PATCH_CAPACITY + yx] = inside ? in[((n * p.c + g * cpg + cc0 + c) * p.h + y) * p.w + x] : 0.0f;
    }
    for (int i = tid; i < OUT_CHANNELS * IN_CHANNELS * rs; i += TILE * TILE) {
      const int kk = i / (IN_CHANNELS * rs), c = i / rs % IN_CHANNELS, tap = i % rs;
      const bool inside = kk < kcount && cc0 + c < cpg;
      taps[i] = inside ? weight[((k0 + kk) * cpg + cc0 + c) * rs + tap] : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int c = 0; c < IN_CHANNELS; ++c) {
      for (int r = 0; r < p.r; ++r) {
        for (int s = 0; s < p.s; ++s) {
          const float x = patch[c * PATCH_CAPACITY + (int(local.y) * p.stride_h + r * p.dil_h) * patch_w +
                                int(local.x) * p.stride_w + s * p.dil_w];
          for (int j = 0; j < OUT_CHANNELS; ++j) acc[j] = fma(x, taps[(j * IN_CHANNELS + c) * rs + r * p.s + s], acc[j]);
        }
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // the next chunk overwrites the tiles
  }

  const int oy = oy0 + int(local.y), ox = ox0 + int(local.x);
  if (oy >= p.oh || ox >= p.ow) return;
  for (int j = 0; j < kcount; ++j) {
    const uint i = uint(((n * p.k + k0 + j) * p.oh + oy) * p.ow + ox);
    out[i] = conv_epilogue(p, bias, residual, k0 + j, i, acc[j]);
  }
}
