// The shape of a kernel launch, the same struct under nvcc (with CUDA's dim3) and the emulator.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include "kernels/simt/types.hpp"
#endif

namespace convlab::simt {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  unsigned shared_bytes = 0;  // dynamic shared memory (CONVLAB_DYNAMIC_SHARED), per block
};

}  // namespace convlab::simt
