// cpu.03_winograd_f2x3: Winograd minimal filtering F(2x2, 3x3).
//
// What changes against cpu.02_direct_xsimd: fewer multiplies instead of faster ones. Each 2x2
// output tile comes from a 4x4 input tile through 16 pointwise products per channel pair instead
// of 36 (2.25x fewer), at the price of input and output tile transforms and transformed weights
// (U = G g G^T, 16 per 3x3 filter, computed in plan). The products of a chunk of tiles become 16
// GEMMs over the channels, on cpu.02's register tile (kernels/cpu/winograd.hpp).
// Why it can be faster: for large C and K the GEMMs dominate and do 2.25x less arithmetic; the
// transforms are O(C + K) per tile, not O(C K). Small C or K (lab-cnn) let the transforms win.
// Bound: the GEMMs are compute-bound; transforms, reorder and output scatter are bound by memory
// and stores. Its GFLOP/s count the direct convolution's FLOPs (effective), so can pass the peak.
// Accuracy: the transforms amplify rounding; error_scale in cpu_kernels.inc says by how much.
// Measured: 104 GFLOP/s effective, 0.74x oneDNN, about cpu.02's speed on mb32ic64ih56oc64oh56kh3ph1
//   (2-core Zen 3 VM, AVX2, interleaved, 2026-11-30); AVX-512: 135-149 GFLOP/s effective, 0.95-1.16x
//   oneDNN (Ice Lake VM, 2026-11-29, before cpu.02's 4 x 7 tile). 8 x 8 layers at batch 1, Ice Lake,
//   chunks spanning images and 1 x 1 GEMM loops (winograd.hpp): 1.42-1.51x oneDNN (2026-12-03).
// Run: build/convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.03_winograd_f2x3,cpu.02_direct_xsimd --interleave
#include "kernels/cpu/winograd.hpp"

namespace convlab::cpu {

namespace {
struct F2x3 {
  static constexpr int m = 2, a = 4;
  static constexpr double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};
}  // namespace

std::string winograd_f2x3_unsupported(const ConvProblem& p) { return winograd::unsupported(p); }

std::unique_ptr<PlannedConv> winograd_f2x3_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  return winograd::plan<F2x3>("cpu.03_winograd_f2x3", p, w, e);
}

}  // namespace convlab::cpu
