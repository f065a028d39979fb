// The int8 tensor-core product for the emulator: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// with its registers spread over the warp exactly as the PTX ISA's "Matrix Fragments for
// mma.m16n8k32" lay them out, so that a kernel that loads the wrong element into a register gets
// the wrong answer here too (unlike wmma.hpp, which models only results). With
// g = lane / 4 and t = lane % 4, and each 32-bit register holding four s8, the lowest byte first:
//   A, 16 x 32 row-major:  a0 = A[g][4t..4t+3]      a1 = A[g+8][4t..4t+3]
//                          a2 = A[g][16+4t..]        a3 = A[g+8][16+4t..]
//   B, 32 x 8 (column n = g):  b0 = B[4t..4t+3][g]   b1 = B[16+4t..16+4t+3][g]
//   C and D, 16 x 8 s32:   c0, c1 = C[g][2t], C[g][2t+1]    c2, c3 = C[g+8][2t], C[g+8][2t+1]
// The sums are exact int32 (no .satfinite: a sum that overflows wraps, as on the GPU).
#include <cstdint>

#include "kernels/simt/sync.hpp"

namespace convlab::simt::detail {

namespace {
std::int32_t byte(std::uint32_t word, int i) { return static_cast<std::int8_t>(word >> (8 * i) & 0xFFu); }
}  // namespace

void mma_m16n8k32_s8_warp(MmaS8Lane* const (&lanes)[32]) {
  std::int32_t a[16][32], b[32][8], c[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const MmaS8Lane& l = *lanes[lane];
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      a[g][4 * t + i] = byte(l.a[0], i);
      a[g + 8][4 * t + i] = byte(l.a[1], i);
      a[g][16 + 4 * t + i] = byte(l.a[2], i);
      a[g + 8][16 + 4 * t + i] = byte(l.a[3], i);
      b[4 * t + i][g] = byte(l.b[0], i);
      b[16 + 4 * t + i][g] = byte(l.b[1], i);
    }
    c[g][2 * t] = l.c[0];
    c[g][2 * t + 1] = l.c[1];
    c[g + 8][2 * t] = l.c[2];
    c[g + 8][2 * t + 1] = l.c[3];
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + i % 2;
      std::uint32_t sum = static_cast<std::uint32_t>(c[row][col]);  // unsigned: wraps like the GPU's adder
      for (int k = 0; k < 32; ++k) sum += static_cast<std::uint32_t>(a[row][k] * b[k][col]);
      lanes[lane]->d[i] = static_cast<std::int32_t>(sum);
    }
  }
}

}  // namespace convlab::simt::detail
