// The other operators a network needs, with the CPU ops' semantics (kernels/cpu/ops.hpp):
// floor-mode pooling, padding never wins a max and counts as zero in an average; softmax
// subtracts the row's max. Reductions give one SIMD-group (32 lanes) to each output and combine
// lanes with simd_sum / simd_max; whole SIMD-groups leave together, so every lane of one that
// reduces is active.
#include <metal_stdlib>
#include "metal_params.h"
using namespace metal;

// One thread per output.
kernel void pool2d(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                   constant MetalPool& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i >= uint(a.planes * a.oh * a.ow)) return;
  const int ox = int(i % uint(a.ow)), oy = int(i / uint(a.ow) % uint(a.oh));
  device const float* plane = in + i / uint(a.ow * a.oh) * uint(a.h * a.w);
  float acc = a.average != 0 ? 0.0f : -INFINITY;
  for (int r = 0; r < a.window; ++r) {
    const int y = oy * a.stride - a.pad + r;
    if (y < 0 || y >= a.h) continue;
    for (int s = 0; s < a.window; ++s) {
      const int x = ox * a.stride - a.pad + s;
      if (x < 0 || x >= a.w) continue;
      const float v = plane[y * a.w + x];
      acc = a.average != 0 ? acc + v : (acc < v ? v : acc);  // std::max, as on the CPU
    }
  }
  out[i] = a.average != 0 ? acc * (1.0f / float(a.window * a.window)) : acc;
}

// One SIMD-group per plane: out = mean of the plane.
kernel void global_avg_pool(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                            constant MetalRows& a [[buffer(2)]], uint gid [[thread_position_in_grid]],
                            uint lane [[thread_index_in_simdgroup]]) {
  const int row = int(gid / 32);
  if (row >= a.rows) return;  // whole SIMD-groups leave together
  float sum = 0.0f;
  for (int i = int(lane); i < a.length; i += 32) sum += in[row * a.length + i];
  sum = simd_sum(sum);
  if (lane == 0) out[row] = sum / float(a.length);
}

// One SIMD-group per output (n, o): y = x . W[o] + b[o], optionally ReLU.
kernel void linear(device const float* in [[buffer(0)]], device const float* weight [[buffer(1)]],
                   device const float* bias [[buffer(2)]], device float* out [[buffer(3)]],
                   constant MetalLinear& a [[buffer(4)]], uint gid [[thread_position_in_grid]],
                   uint lane [[thread_index_in_simdgroup]]) {
  const int row = int(gid / 32);
  if (row >= a.batch * a.out_features) return;
  const int n = row / a.out_features, o = row % a.out_features;
  float sum = 0.0f;
  for (int i = int(lane); i < a.in_features; i += 32) sum += in[n * a.in_features + i] * weight[o * a.in_features + i];
  sum = simd_sum(sum);
  if (lane != 0) return;
  if (a.has_bias != 0) sum += bias[o];
  out[row] = a.relu != 0 && sum < 0.0f ? 0.0f : sum;
}

kernel void add(device const float* x [[buffer(0)]], device const float* y [[buffer(1)]], device float* out [[buffer(2)]],
                constant MetalAdd& a [[buffer(3)]], uint i [[thread_position_in_grid]]) {
  if (i >= uint(a.count)) return;
  const float v = x[i] + y[i];
  out[i] = a.relu != 0 && v < 0.0f ? 0.0f : v;
}

// One SIMD-group per row: its max, then the sum of exponentials.
kernel void softmax(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                    constant MetalRows& a [[buffer(2)]], uint gid [[thread_position_in_grid]],
                    uint lane [[thread_index_in_simdgroup]]) {
  const int row = int(gid / 32);
  if (row >= a.rows) return;
  device const float* x = in + row * a.length;
  device float* y = out + row * a.length;
  float top = -INFINITY;
  for (int i = int(lane); i < a.length; i += 32) top = top < x[i] ? x[i] : top;
  top = simd_max(top);
  float sum = 0.0f;
  for (int i = int(lane); i < a.length; i += 32) sum += exp(x[i] - top);
  sum = simd_sum(sum);
  for (int i = int(lane); i < a.length; i += 32) y[i] = exp(x[i] - top) / sum;
}
