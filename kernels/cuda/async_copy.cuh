// Asynchronous copies from global to shared memory (sm_80's cp.async): a thread issues them, they
// land while it computes, and it waits for a group of them before the barrier that publishes the
// data. Zero-fill is built in: a copy whose source is outside the tensor reads nothing and writes
// zeros (src-size 0), so the padding of an im2col tile costs no branch around the copy.
//
// Under the CPU emulator (no __CUDA_ARCH__) a copy is done when issued and waiting is a no-op: the
// emulator checks what is copied where, not the timing, so a missing wait shows only on a GPU.
#pragma once

#include "kernels/simt/simt.hpp"

namespace convlab::cuda {

// 16 bytes (4 floats, both addresses 16-byte aligned); zeros when !valid (src is then not read).
__device__ __forceinline__ void copy_async_16(float* shared_dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
#else
  for (int i = 0; i < 4; ++i) shared_dst[i] = valid ? src[i] : 0.0f;
#endif
}

// One float; zero when !valid.
__device__ __forceinline__ void copy_async_4(float* shared_dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
#else
  *shared_dst = valid ? *src : 0.0f;
#endif
}

// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending committed groups are still in flight (this thread's own copies;
// a __syncthreads() after it makes every thread's landed copies visible to the block).
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace convlab::cuda
