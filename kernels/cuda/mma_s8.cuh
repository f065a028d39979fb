// The int8 tensor-core instruction as a function: d = a b + c for one warp's 16 x 8 x 32 tile,
// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, each lane passing its registers in PTX's
// fragment layout (kernels/simt/mma.cpp spells it out). Under nvcc it is the instruction itself
// (sm_80 and later); under the CPU emulator simt.hpp defines the same function, which exchanges
// the lanes' registers and computes the product with the same layout.
#pragma once

#include "kernels/simt/simt.hpp"

#if defined(__CUDACC__)
__device__ __forceinline__ void mma_m16n8k32_s8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                                const int (&c)[4]) {
#if __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#else
  __trap();  // no int8 m16n8k32 before sm_80; the build targets 80 and 90 (cmake/Cuda.cmake)
#endif
}
#endif
