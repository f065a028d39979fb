// cpu.23_int8_direct_vnni planned with one register tile, as plan would after measuring them
// (cpu.23_int8_direct_vnni.cpp, fastest_variant.hpp): for the tests, which must reach every tile
// whatever this machine's measurement would choose.
#pragma once

#include <memory>
#include <vector>

#include "kernels/common/int8_kernel.hpp"

namespace convlab::cpu {

// A register tile: output-channel blocks (of the SIMD width) x output pixels.
struct VnniTile {
  int k_blocks, pixels;
};

// This build's tiles (they follow its vector registers).
std::vector<VnniTile> int8_direct_vnni_tiles();
// A tile not among them is an InputError.
std::unique_ptr<PlannedInt8Conv> int8_direct_vnni_plan_as(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e,
                                                          VnniTile tile);

}  // namespace convlab::cpu
