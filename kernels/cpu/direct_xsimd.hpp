// cpu.02_direct_xsimd planned with one register tile and one input layout, as plan would after
// measuring them (cpu.02_direct_xsimd.cpp, plan_fastest_tile): for the tests, which must reach
// every combination whatever this machine's measurement would choose.
#pragma once

#include <memory>

#include "kernels/common/kernel.hpp"

namespace convlab::cpu {

// tile_k_blocks: output-channel blocks per register tile, kMaxKBlocks down to half of it
// (microkernel.hpp); in_place: read the NCHW input in place, where the layer allows it (1 x 1,
// stride 1, unpadded, not every channel's line in one L1 set).
std::unique_ptr<PlannedConv> direct_xsimd_plan_as(const ConvProblem& p, const ConvWeights& w, Epilogue e, int tile_k_blocks,
                                                  bool in_place);

}  // namespace convlab::cpu
