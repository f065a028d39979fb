// The shim every CUDA kernel source includes first. Under nvcc it is CUDA itself; in a plain C++
// build it turns the same source into functions that the emulator (kernels/simt/emulator.hpp)
// runs on the CPU, one fiber per GPU thread. README.md says what is and is not emulated.
#pragma once

#include "kernels/simt/launch_config.hpp"
#include "kernels/simt/sync.hpp"

#if defined(__CUDACC__)

#define CONVLAB_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

#else  // the emulator

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#if !defined(__GNUC__)  // GCC and Clang know __restrict__ already
#define __restrict__ __restrict
#endif
// A block's fibers all run on one OS thread, so static storage serves as shared memory. The
// linker gathers these statics into one section that the emulator poisons before every block
// (kernels/simt/shared.ld; README.md, "Shared memory").
#define __shared__ static
#define CONVLAB_DYNAMIC_SHARED(type, name) \
  type* const name = static_cast<type*>(::convlab::simt::detail::dynamic_shared())

namespace convlab::simt::detail {

struct BuiltinVars {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
// The running GPU thread's built-ins: the scheduler points this at a fiber before resuming it.
inline thread_local const BuiltinVars* current_vars = nullptr;

void* dynamic_shared();

}  // namespace convlab::simt::detail

#define threadIdx (::convlab::simt::detail::current_vars->thread_idx)
#define blockIdx (::convlab::simt::detail::current_vars->block_idx)
#define blockDim (::convlab::simt::detail::current_vars->block_dim)
#define gridDim (::convlab::simt::detail::current_vars->grid_dim)
inline constexpr int warpSize = 32;

// Barriers. The call site is recorded so that divergent barriers are reported by file:line.
inline void __syncthreads(::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  convlab::simt::detail::block_barrier(1, site);
}
inline int __syncthreads_count(int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::block_barrier(predicate, site).count;
}
inline int __syncthreads_and(int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  const auto r = convlab::simt::detail::block_barrier(predicate, site);
  return r.count == r.arrived;
}
inline int __syncthreads_or(int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::block_barrier(predicate, site).count != 0;
}
inline void __syncwarp(unsigned mask = 0xffffffffu, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  convlab::simt::detail::warp_op(convlab::simt::detail::WarpOp::sync, mask, 0, 0, warpSize, site);
}
// One OS thread runs every fiber, so there is nothing to order: fences are no-ops.
inline void __threadfence() {}
inline void __threadfence_block() {}

// Warp shuffles and votes, for 4- and 8-byte arithmetic types (int, unsigned, float, ...).
template <convlab::simt::detail::WarpValue T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize,
              ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::shuffle(convlab::simt::detail::WarpOp::shfl_idx, mask, var, src_lane, width, site);
}
template <convlab::simt::detail::WarpValue T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                 ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::shuffle(convlab::simt::detail::WarpOp::shfl_up, mask, var, static_cast<int>(delta),
                                        width, site);
}
template <convlab::simt::detail::WarpValue T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                   ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::shuffle(convlab::simt::detail::WarpOp::shfl_down, mask, var,
                                        static_cast<int>(delta), width, site);
}
template <convlab::simt::detail::WarpValue T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize,
                  ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return convlab::simt::detail::shuffle(convlab::simt::detail::WarpOp::shfl_xor, mask, var, lane_mask, width, site);
}
inline unsigned __ballot_sync(unsigned mask, int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return static_cast<unsigned>(
      convlab::simt::detail::warp_op(convlab::simt::detail::WarpOp::ballot, mask, predicate != 0, 0, warpSize, site));
}
inline int __any_sync(unsigned mask, int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return static_cast<int>(
      convlab::simt::detail::warp_op(convlab::simt::detail::WarpOp::any, mask, predicate != 0, 0, warpSize, site));
}
inline int __all_sync(unsigned mask, int predicate, ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  return static_cast<int>(
      convlab::simt::detail::warp_op(convlab::simt::detail::WarpOp::all, mask, predicate != 0, 0, warpSize, site));
}
inline unsigned __activemask() { return convlab::simt::detail::active_mask(); }

// The int8 tensor-core instruction mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, d = a b + c,
// each lane holding its share of the warp's fragments in PTX's layout (kernels/simt/mma.cpp). Not a
// CUDA built-in: under nvcc kernels/cuda/mma_s8.cuh defines the same function as inline PTX.
inline void mma_m16n8k32_s8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const int (&c)[4],
                            ::convlab::simt::detail::Site site = CONVLAB_SIMT_HERE) {
  convlab::simt::detail::MmaS8Lane lane{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}, {c[0], c[1], c[2], c[3]}, {}};
  convlab::simt::detail::warp_op(convlab::simt::detail::WarpOp::mma_s8, ~0u, reinterpret_cast<std::uintptr_t>(&lane), 0,
                                 warpSize, site);
  for (int i = 0; i < 4; ++i) d[i] = lane.d[i];
}

#include "kernels/simt/intrinsics.hpp"

#endif  // __CUDACC__
