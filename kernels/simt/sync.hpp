// What a kernel thread asks of the emulator, in plain types: where it is, barriers and warp
// (SIMD-group) operations. Shared by the CUDA shim (simt.hpp) and the Metal one (msl.hpp), which
// cannot see CUDA's vector types (MSL has its own uint3).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace convlab::simt::detail {

// Where a barrier or warp op was called. Not std::source_location: Clang 14 with libstdc++ 12
// lacks it. Site::here() as a default argument gives the caller's file and line with GCC and
// Clang (GCC resolves the builtins in a braced Site{...} to the declaration instead). GCC 12 has
// no __builtin_COLUMN, so two barriers on one line count as one site.
struct Site {
  const char* file;
  unsigned line;
  static constexpr Site here(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    return {file, line};
  }
};
#define CONVLAB_SIMT_HERE ::convlab::simt::detail::Site::here()

// The running thread's position: CUDA's threadIdx, blockIdx, blockDim, gridDim.
struct Coordinates {
  unsigned thread[3], block[3], block_dim[3], grid_dim[3];
};
Coordinates coordinates();

enum class WarpOp : unsigned char { sync, shfl_idx, shfl_up, shfl_down, shfl_xor, ballot, any, all, mma_s8 };
// Every warp op is one rendezvous: the calling fiber posts `value` and waits for its warp.
std::uint64_t warp_op(WarpOp op, unsigned mask, std::uint64_t value, int lane_arg, int width,
                      const Site& site);
unsigned active_mask();

struct BarrierResult {
  int count;    // arrived threads whose predicate was non-zero
  int arrived;  // live threads of the block
};
BarrierResult block_barrier(int predicate, const Site& site);

// One lane's registers of mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, posted to the warp op
// mma_s8 by address (the lane waits on its own stack until the whole warp has arrived).
struct MmaS8Lane {
  std::uint32_t a[4], b[2];  // four s8 each, the lowest byte first
  std::int32_t c[4];
  std::int32_t d[4];  // written for every lane once the 32 have arrived
};
// D = A B + C for the warp, each lane's share in PTX's fragment layout (mma.cpp says which).
void mma_m16n8k32_s8_warp(MmaS8Lane* const (&lanes)[32]);

template <class T>
concept WarpValue = std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8);

template <WarpValue T>
T shuffle(WarpOp op, unsigned mask, T v, int arg, int width, const Site& site) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const std::uint64_t out = warp_op(op, mask, std::bit_cast<Bits>(v), arg, width, site);
  return std::bit_cast<T>(static_cast<Bits>(out));
}

}  // namespace convlab::simt::detail
