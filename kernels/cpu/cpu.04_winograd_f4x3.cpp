// cpu.04_winograd_f4x3: Winograd minimal filtering F(4x4, 3x3).
//
// What changes against cpu.03_winograd_f2x3: larger tiles. A 4x4 output tile comes from a 6x6
// input tile through 36 products per channel pair: 2.25 multiplies per output instead of
// F(2x2)'s 4 and direct convolution's 9; the same machinery runs 36 GEMMs per chunk of tiles.
// Why it can be faster: fewer multiplies per output and half as many tiles, so half the input
// transform work per output. Why it may not be: the 6x6 transforms have more terms, and the
// GEMMs are smaller per tile.
// Bound: as cpu.03; its effective GFLOP/s (direct-convolution FLOPs) pass the machine's peak.
// Accuracy: the transform points 0, +-1, +-2 and the 1/6, 1/12, 1/24 factors amplify rounding
// about 10x more than F(2x2)'s (error_scale 436 in cpu_kernels.inc, with the reason).
// Measured: 171 GFLOP/s effective, 1.21x oneDNN on mb32ic64ih56oc64oh56kh3ph1 (2-core Zen 3 VM, AVX2,
//   2026-11-30); 1.6x oneDNN on the 2-core Ice Lake VM (AVX-512). 8 x 8 layers at batch 32 (Ice Lake,
//   2026-12-03): 0.44x -> 1.77-1.87x oneDNN once a GEMM spans several images' tiles (winograd.hpp).
//   512 channels on 7 x 7 at batch 32 (Zen 5, 2026-12-06): 0.52x -> 1.8x oneDNN once chunks are sized
//   by the traffic of U (36 x C x K floats), not only by what V and M leave of L2.
// Run: build/convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.04_winograd_f4x3,cpu.02_direct_xsimd --interleave
#include "kernels/cpu/winograd.hpp"

namespace convlab::cpu {

namespace {
// Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016), points 0, +-1, +-2.
struct F4x3 {
  static constexpr int m = 4, a = 6;
  static constexpr double bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                      {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double g[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  static constexpr double at[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};
}  // namespace

std::string winograd_f4x3_unsupported(const ConvProblem& p) { return winograd::unsupported(p); }

std::unique_ptr<PlannedConv> winograd_f4x3_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  return winograd::plan<F4x3>("cpu.04_winograd_f4x3", p, w, e);
}

}  // namespace convlab::cpu
