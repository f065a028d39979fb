// The int8 kernel contract: the FP32 contract (kernels/common/kernel.hpp) with quint8 activations
// in and out, qint8 weights and the requantisation of kernels/common/quantize.hpp fused in the
// epilogue. Its own type, not a flag on KernelInfo: run() takes bytes, and a type that cannot be
// handed floats keeps an int8 kernel out of every FP32 path by construction.
// Lists: kernels/<backend>/<backend>_int8_kernels.inc, one line per kernel, as for FP32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kernels/common/kernel.hpp"
#include "kernels/common/quantize.hpp"

namespace convlab {

class PlannedInt8Conv {
 public:
  virtual ~PlannedInt8Conv() = default;
  virtual std::size_t workspace_bytes() const { return 0; }
  virtual std::size_t weight_bytes() const = 0;
  // The timed forward: input problem.input_elems() quint8 values, NCHW; output output_elems().
  virtual void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const = 0;
  // As for FP32: a kernel that converts layouts inside run also exposes the conversions alone.
  virtual bool changes_layout() const { return false; }
  virtual void run_layout_changes_only(const std::uint8_t* /*input*/, std::uint8_t* /*output*/, void* /*workspace*/) const {}
  // For a kernel that picks another (cpu.auto_int8): the id of the one it runs, and why.
  virtual std::string chosen_kernel() const { return {}; }
  virtual std::string explain() const { return {}; }
};

struct Int8KernelInfo {
  std::string_view id;  // <backend>.<NN>_int8_<technique>, numbered after the FP32 progression
  Backend backend;
  std::string_view summary;
  bool baseline;
  bool deterministic;
  // Outputs may differ from the int8 oracle (cpu.20_int8_reference) by at most this many quanta:
  // 0 for ours, which compute quantize.hpp's arithmetic exactly; a library that orders the float
  // operations of the requantisation its own way may round a value near a half quantum apart.
  int max_quanta;
  std::string (*unsupported)(const ConvProblem&);
  std::unique_ptr<PlannedInt8Conv> (*plan)(const ConvProblem&, const Int8ConvWeights&, Epilogue);

  bool supports(const ConvProblem& p) const { return unsupported(p).empty(); }
};

std::span<const Int8KernelInfo> all_int8_kernels();
const Int8KernelInfo* find_int8_kernel(std::string_view id);
// Whether this build's CPU kernels on u8 x s8 quads have the seven-bit path (no VNNI; AVX2 or
// AVX-512BW): a faster exact form taken by runs whose input bytes are all under 128
// (kernels/cpu/int8_simd.hpp).
bool cpu_int8_seven_bit_path();

}  // namespace convlab
