// Reductions shared by several kernels: warp sums by shuffles (ops.cu's per-row kernels, cuda.06's
// fused global average) and one pooling window (ops.cu's pool2d, cuda.06's fused pools), so each
// rule is written once. The CPU emulator runs them too.
#pragma once

#include <cmath>

#include "kernels/cuda/epilogue.cuh"

namespace convlab::cuda {

// Lane 0 gets the sum of v over the warp's 32 lanes.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Output (oy, ox) of a kPoolMax or kPoolAvg window over an h x w plane whose values at(y, x)
// gives: floor mode, padding never wins a max and counts as zero in an average (PyTorch's
// count_include_pad default).
template <class At>
__device__ __forceinline__ float pool_window(int kind, int h, int w, int kernel, int stride, int pad, int oy, int ox,
                                             At at) {
  const bool average = kind == kPoolAvg;
  float acc = average ? 0.0f : -INFINITY;
  for (int r = 0; r < kernel; ++r) {
    const int y = oy * stride - pad + r;
    if (y < 0 || y >= h) continue;
    for (int s = 0; s < kernel; ++s) {
      const int x = ox * stride - pad + s;
      if (x < 0 || x >= w) continue;
      const float v = at(y, x);
      acc = average ? acc + v : fmaxf(acc, v);
    }
  }
  return average ? acc * (1.0f / static_cast<float>(kernel * kernel)) : acc;
}

}  // namespace convlab::cuda
