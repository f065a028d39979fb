// Small MSL kernels for the emulator's Metal shim (kernels/simt/msl.hpp), run by test_metal.cpp
// through their entry points convlab_msl_<name>. Each checks one thing the shim provides.
#include <metal_stdlib>
using namespace metal;

// 12 values per thread, at its linear position in the grid.
kernel void write_positions(device uint* out [[buffer(0)]], uint3 gid [[thread_position_in_grid]],
                            uint3 local [[thread_position_in_threadgroup]], uint3 group [[threadgroup_position_in_grid]],
                            uint3 size [[threads_per_grid]], uint index [[thread_index_in_threadgroup]],
                            uint simd [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
  device uint* o = out + 12 * (gid.x + size.x * (gid.y + size.y * gid.z));
  o[0] = gid.x, o[1] = gid.y, o[2] = gid.z;
  o[3] = local.x, o[4] = local.y, o[5] = local.z;
  o[6] = group.x, o[7] = group.y, o[8] = group.z;
  o[9] = index, o[10] = simd, o[11] = lane;
}

kernel void simd_functions(device const float* in [[buffer(0)]], device float* sums [[buffer(1)]],
                           device float* down [[buffer(2)]], device float* maxima [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
  sums[i] = simd_sum(in[i]);
  down[i] = simd_shuffle_down(in[i], 1);
  maxima[i] = simd_max(in[i]);
}

// Each thread reads its neighbour's slot; without the barrier thread t reads slot t + 1 before
// thread t + 1 has written it, and gets the emulator's poison.
kernel void neighbour_read(device float* out [[buffer(0)]], constant int& with_barrier [[buffer(1)]],
                           uint t [[thread_position_in_threadgroup]]) {
  threadgroup float slots[64];
  slots[t] = float(t);
  if (with_barrier != 0) threadgroup_barrier(mem_flags::mem_threadgroup);
  out[t] = slots[(t + 1) % 64];
}

kernel void divergent_barrier(device float* out [[buffer(0)]], uint t [[thread_position_in_threadgroup]]) {
  if (t % 2 == 0) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
  } else {
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[t] = 1.0f;
}

// c = a x b^T + 1, b read transposed from memory.
kernel void matrix_product(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                           device float* c [[buffer(2)]]) {
  simdgroup_float8x8 x, y;
  simdgroup_float8x8 z = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
  simdgroup_load(x, a, 8);
  simdgroup_load(y, b, 8, ulong2(0), true);
  simdgroup_multiply_accumulate(z, x, y, z);
  simdgroup_store(z, c, 8);
}

kernel void to_half(device const float* in [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = float(half(in[i]));
}
