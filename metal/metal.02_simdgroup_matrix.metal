// metal.02_simdgroup_matrix: implicit GEMM on the SIMD-group matrix units (8 x 8 FP32 tiles).
//
// What changes against metal.01: the convolution becomes a matrix product, out[k][pixel] =
//   W[k][c r s] x X[c r s][pixel], never materialised (implicit GEMM: the im2col column is
//   gathered while staging). A threadgroup of 4 SIMD-groups owns a 32 x 32 output tile (output
//   channels x pixels of the whole batch); each SIMD-group a 16 x 16 quarter, as 2 x 2
//   simdgroup_float8x8 accumulators. Per step of 8 taps the threadgroup stages a 32 x 8 weight
//   tile and an 8 x 32 input tile in threadgroup memory; each SIMD-group then does 4
//   simdgroup_multiply_accumulate, 8 x 8 x 8 FMAs each, spread over its 32 lanes.
// Why faster: the matrix instructions feed the ALUs from registers shared across the SIMD-group,
//   so each value loaded from threadgroup memory serves 8 FMAs instead of 1; pixels of the whole
//   batch form one dimension, so batch 32 fills the GPU even when each image is small. Still
//   FP32, the same accuracy as metal.00. Expect 30-60% of the FP32 peak on Apple GPUs.
// Supports: groups = 1 (its rule, ungrouped_only, in metal/dispatch.cpp).
// Measured: not yet measured on a GPU (no Mac has run these kernels; the emulator checks results,
//   not speed).
// Run: build/convlab conv --backend metal --problem mb32ic64ih56oc64oh56kh3ph1 --kernel metal.02_simdgroup_matrix
#include <metal_stdlib>
#include "conv_epilogue.h"
using namespace metal;

#define TILE 32   // output channels and pixels per threadgroup, as metal/dispatch.hpp's kMatrixTile
#define STEP 8    // taps per step

// threadgroups: x = pixel tiles (n * oh * ow / 32), y = output-channel tiles; 128 threads each
kernel void conv_simdgroup_matrix(device const float* in [[buffer(0)]], device const float* weight [[buffer(1)]],
                                  device const float* bias [[buffer(2)]], device const float* residual [[buffer(3)]],
                                  device float* out [[buffer(4)]], constant MetalConv& p [[buffer(5)]],
                                  uint3 group [[threadgroup_position_in_grid]],
                                  uint tid [[thread_index_in_threadgroup]],
                                  uint simd [[simdgroup_index_in_threadgroup]]) {
  threadgroup float a_tile[TILE * STEP];   // weights: 32 channels x 8 taps
  threadgroup float b_tile[STEP * TILE];   // input: 8 taps x 32 pixels
  threadgroup float c_tile[TILE * TILE];   // the result, for the epilogue
  const int taps = p.c * p.r * p.s, rs = p.r * p.s, plane = p.oh * p.ow, pixels = p.n * plane;
  const int k0 = int(group.y) * TILE, pixel0 = int(group.x) * TILE;
  const int sm = int(simd) / 2 * 16, sn = int(simd) % 2 * 16;  // this SIMD-group's quarter

  simdgroup_float8x8 acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

  for (int t0 = 0; t0 < taps; t0 += STEP) {
    for (int e = int(tid); e < TILE * STEP; e += 128) {  // 2 of each tile per thread
      const int row = e / STEP, tap = t0 + e % STEP;
      a_tile[e] = k0 + row < p.k && tap < taps ? weight[(k0 + row) * taps + tap] : 0.0f;
      const int tap_b = t0 + e / TILE, pixel = pixel0 + e % TILE;
      float x = 0.0f;
      if (tap_b < taps && pixel < pixels) {
        const int c = tap_b / rs, r = tap_b % rs / p.s, s = tap_b % p.s;
        const int n = pixel / plane, oy = pixel % plane / p.ow, ox = pixel % p.ow;
        const int y = oy * p.stride_h - p.pad_h + r * p.dil_h, xx = ox * p.stride_w - p.pad_w + s * p.dil_w;
        if (y >= 0 && y < p.h && xx >= 0 && xx < p.w) x = in[((n * p.c + c) * p.h + y) * p.w + xx];
      }
      b_tile[e] = x;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 a[2], b[2];
    for (int i = 0; i < 2; ++i) simdgroup_load(a[i], a_tile + (sm + i * 8) * STEP, STEP);
    for (int j = 0; j < 2; ++j) simdgroup_load(b[j], b_tile + sn + j * 8, TILE);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) simdgroup_multiply_accumulate(acc[i][j], a[i], b[j], acc[i][j]);
    threadgroup_barrier(mem_flags::mem_threadgroup);  // the next step overwrites the tiles
  }

  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) simdgroup_store(acc[i][j], c_tile + (sm + i * 8) * TILE + sn + j * 8, TILE);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int e = int(tid); e < TILE * TILE; e += 128) {
    const int k = k0 + e / TILE, pixel = pixel0 + e % TILE;
    if (k >= p.k || pixel >= pixels) continue;
    const int n = pixel / plane, yx = pixel % plane;
    const uint i = uint((n * p.k + k) * plane + yx);
    out[i] = conv_epilogue(p, bias, residual, k, i, c_tile[e]);
  }
}
