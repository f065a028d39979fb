// cpu.03_winograd_f2x3: Winograd minimal filtering F(2x2, 3x3).
//
// What changes against cpu.02_direct_xsimd: fewer multiplies instead of faster ones. Each 2x2
// output tile comes from a 4x4 input tile through 16 pointwise products per channel pair instead
// of 36 (2.25x fewer), at the price of input/output tile transforms and transformed weights
// (U = G g G^T, 16 per 3x3 filter, computed in plan). The products of all tiles of a chunk
// become 16 GEMMs over the channels (kernels/cpu/winograd.hpp has the machinery).
//
// Why it can be faster: for C, K large the GEMMs dominate and they do 2.25x less arithmetic than
// the direct convolution; the transforms are O(C + K) per tile, not O(C K). Small C or K (lab-cnn)
// make the transforms and the small GEMMs' overhead dominate instead.
// Expected bound: the GEMM phase is compute-bound (cpu.02's register tile, microkernel.hpp); the
// transforms are vector adds on blocks of channels (NCHWc), and the NCHW input reorder and the
// output scatter are bound by memory and store throughput. On mb32ic64ih56oc64oh56kh3ph1 (one
// thread, noisy shared machine) it ran about as fast as cpu.02: perf gives the GEMMs ~60% of the
// run, transforms ~20%, reorder ~8%, so the 2.25x fewer multiplies are eaten by the rest.
// Counted in direct-conv FLOPs (as convlab reports), its rate can exceed the machine's peak.
// Accuracy: the transforms add and subtract neighbouring inputs and halve weights, so the error
// grows beyond plain FP32 summation; see the error_scale beside this kernel in cpu_kernels.inc.
//
// Benchmark: build/convlab run --model lab-cnn --kernel cpu.03_winograd_f2x3 --batch 1,32
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
