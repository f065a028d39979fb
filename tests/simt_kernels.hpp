// Declarations of the test kernels in simt_kernels.cu, for the host side of test_simt.cpp. Plain
// C++: under the emulator a __global__ function is an ordinary function.
#pragma once

#include "kernels/simt/types.hpp"

namespace convlab::simt_test {

// Each thread writes 12 values: threadIdx, blockIdx, blockDim, gridDim (x, y, z each), at its
// global linear id (block linear id * threads per block + thread linear id).
void write_indices(unsigned* out);
// out[blockIdx.x] = sum of in[blockIdx.x * Block ...] (zero past n), a tree in shared memory.
template <int Block>
void block_sum(const float* in, float* out, int n);
// 64 threads; threads >= 48 return before the first barrier. out[0] = 0 + 1 + ... + 63.
void early_exit_sum(float* out, int* barrier_count);
// One block of 64: per warp, a __shfl_down_sync sum (down[warp]), a __shfl_xor_sync sum seen by
// every lane (xor_all[tid]), a ballot of in > 0 (ballots[warp]), an inclusive __shfl_up_sync scan
// of int(in) (scan[tid]) and lane 0's value broadcast with __shfl_sync (broadcast[tid]).
void warp_ops(const float* in, float* down, float* xor_all, unsigned* ballots, int* scan, float* broadcast);
// bins[in[i]] += 1 with atomicAdd; *max_value = the largest in[i] with atomicMax.
void histogram(const int* in, int n, unsigned* bins, int* max_value);
// out[i] = in[i] * s for float4 elements, through __ldg and make_float4.
void scale4(const float4* in, float4* out, float s, int n4);
// The planted bug: each thread writes slot t of shared memory and, with no barrier, reads slot
// t + 1 (mod N). out[3 * t + k] for k = static __shared__ in a template, in an inline device
// function, and dynamic shared memory; block b writes at offset b * 3 * N.
template <int N>
void missing_barrier(float* out);
// The same bug with a __shared__ in an ordinary (non-template) kernel: out[t].
void missing_barrier_plain(float* out);
// Threads 0-31 wait at one __syncthreads, the rest at another.
void divergent_barrier();
extern const int divergent_line_a;
extern const int divergent_line_b;
// Thread 0 waits at __syncthreads while lanes 1-31 of its warp wait in __shfl_down_sync.
void warp_barrier_deadlock(float* out);
// Thread `bad` throws std::runtime_error between two barriers; every thread holds a local whose
// destructor counts into *destroyed.
void throwing_kernel(int bad, int* destroyed);
// `iterations` barriers, for the context-switch rate.
void barrier_loop(int iterations, int* out);

// signed_out[i] = __dp4a(a[i], b[i], c[i]) on s8 bytes, unsigned_out[i] the u8 overload's.
void dp4a_values(const int* a, const int* b, const int* c, int* signed_out, unsigned* unsigned_out);
// One warp: d = a b + c through mma_m16n8k32_s8, each lane loading its registers in PTX's fragment
// layout from a (16 x 32 s8, row-major), b (8 columns of 32 s8) and c (16 x 8, row-major); d
// row-major. Lanes `lanes` and up return first (a planted bug when lanes < 32).
void mma_tile(const signed char* a, const signed char* b, const int* c, int* d, int lanes);

}  // namespace convlab::simt_test
